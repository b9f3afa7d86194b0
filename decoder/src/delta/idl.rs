//! The route instructions' IDL shapes (a leaf): what the generated `tables.rs` is written in
//! and `route.rs` reads.

/// An argument of a route instruction (generated from the IDL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteArg {
    pub name: &'static str,
    pub ty: RouteArgType,
}

/// Encodings used by route arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteArgType {
    U8,
    U16,
    U64,
    /// `Vec<RoutePlanStep>`: split in percent (`u8`).
    PlanV1,
    /// `Vec<RoutePlanStepV2>`: split in basis points (`u16`).
    PlanV2,
}

/// A named account of a route instruction (generated from the IDL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedAccount {
    pub name: &'static str,
    pub writable: bool,
    pub signer: bool,
    pub optional: bool,
    /// The address the IDL fixes for this account, if any.
    pub address: Option<&'static str>,
}

/// One route instruction of the IDL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteInstruction {
    pub name: &'static str,
    pub discriminator: u64,
    pub args: &'static [RouteArg],
    pub accounts: &'static [NamedAccount],
}
