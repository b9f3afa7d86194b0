//! Checks `stream.proto` (through the descriptor set compiled into the crate) against the interface
//! specification, and checks the proto3 JSON mapping of the generated serde impls.
//!
//! The tables below are transcribed BY HAND from the specification (sections 2.1-2.10, 4.1, 6),
//! not derived from the `.proto`: a drift between the two fails here. The interface may grow,
//! never change: every message, field, number, type and enum value of the specification must be
//! present and unchanged, and anything added must use numbers the specification does not.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label as PLabel, Type as PType};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet};
use serde_json::json;

use stream_proto::FILE_DESCRIPTOR_SET;
use stream_proto::stream::{
    AlphaFunBuy, DecodedInstruction, DecodedTransaction, DeltaNamedAccount, DexProgram,
    ProgramFilter, SubscribeRequest, SubscribeUpdate, decoded_instruction::Decoded,
    subscribe_update::Update,
};

// ------------------------------------------------------------------------------------------------
// The specification, transcribed.
// ------------------------------------------------------------------------------------------------

/// Field type as the spec tables write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    U64,
    U32,
    I32,
    Bool,
    Str,
    Bytes,
    /// A message of package `stream`.
    Msg(&'static str),
    /// An enum of package `stream`.
    Enum(&'static str),
    /// `map<K, V>`.
    Map(MapTy, MapTy),
}

/// Key/value types of a `map<K, V>` as they appear in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MapTy {
    Str,
    /// A message of package `stream`.
    Msg(&'static str),
}

/// Cardinality / presence as the spec tables write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum L {
    /// Plain proto3 singular field (implicit presence).
    Plain,
    /// `optional` (proto3 explicit presence).
    Opt,
    /// `repeated`.
    Rep,
    /// Member of the named `oneof`.
    OneOf(&'static str),
}

use L::{OneOf, Opt, Plain, Rep};
use Ty::{Bool, Bytes, Enum, I32, Map, Msg, Str, U32, U64};

type Field = (&'static str, i32, L, Ty);

/// Every message of the spec: name -> fields (name, number, label, type).
fn spec_messages() -> Vec<(&'static str, Vec<Field>)> {
    const SS: Ty = Map(MapTy::Str, MapTy::Str);
    vec![
        // §2.3
        (
            "SubscribeRequest",
            vec![
                (
                    "subscriptions",
                    1,
                    Plain,
                    Map(MapTy::Str, MapTy::Msg("ProgramFilter")),
                ),
                ("ping_id", 2, Opt, I32),
            ],
        ),
        // §2.4
        (
            "ProgramFilter",
            vec![
                ("programs", 1, Rep, Enum("DexProgram")),
                ("instruction_types", 2, Rep, Str),
                ("accounts_include", 3, Rep, Str),
                ("accounts_exclude", 4, Rep, Str),
                ("accounts_required", 5, Rep, Str),
            ],
        ),
        // §2.5
        (
            "SubscribeUpdate",
            vec![
                ("transaction", 1, OneOf("update"), Msg("DecodedTransaction")),
                ("pong", 2, OneOf("update"), I32),
                ("slot", 3, OneOf("update"), Msg("SlotNotification")),
                ("delta", 4, OneOf("update"), Msg("DeltaUpdate")),
            ],
        ),
        ("SlotNotification", vec![("slot", 1, Plain, U64)]),
        // §2.6
        (
            "DecodedTransaction",
            vec![
                ("slot", 1, Plain, U64),
                ("signature", 2, Plain, Bytes),
                ("tx_index", 3, Plain, U32),
                ("signer", 4, Plain, Bytes),
                ("account_keys", 5, Rep, Bytes),
                ("decoded_instructions", 6, Rep, Msg("DecodedInstruction")),
                ("uses_lookup_tables", 7, Plain, Bool),
                ("matched_filters", 8, Rep, Str),
                ("server_timing", 9, Opt, Msg("ServerTiming")),
            ],
        ),
        // §2.7
        (
            "ServerTiming",
            vec![
                ("first_read_unix_nanos", 1, Plain, U64),
                ("capture_done_unix_nanos", 2, Plain, U64),
                ("deshred_done_unix_nanos", 3, Plain, U64),
                ("decode_done_unix_nanos", 4, Plain, U64),
                ("publish_unix_nanos", 5, Plain, U64),
                ("subscriber_recv_unix_nanos", 6, Plain, U64),
            ],
        ),
        // §2.8
        (
            "DecodedInstruction",
            vec![
                ("program", 1, Plain, Enum("DexProgram")),
                ("instruction_name", 2, Plain, Str),
                ("instruction_index", 3, Plain, U32),
                ("account_indices", 4, Rep, U32),
                ("raw_data", 5, Plain, Bytes),
                (
                    "alpha_fun_create",
                    10,
                    OneOf("decoded"),
                    Msg("AlphaFunCreate"),
                ),
                ("alpha_fun_buy", 11, OneOf("decoded"), Msg("AlphaFunBuy")),
                ("alpha_fun_sell", 12, OneOf("decoded"), Msg("AlphaFunSell")),
                ("alpha_amm_buy", 20, OneOf("decoded"), Msg("AlphaAmmBuy")),
                ("alpha_amm_sell", 21, OneOf("decoded"), Msg("AlphaAmmSell")),
                (
                    "alpha_amm_create_pool",
                    22,
                    OneOf("decoded"),
                    Msg("AlphaAmmCreatePool"),
                ),
                (
                    "alpha_amm_deposit",
                    23,
                    OneOf("decoded"),
                    Msg("AlphaAmmDeposit"),
                ),
                (
                    "alpha_amm_withdraw",
                    24,
                    OneOf("decoded"),
                    Msg("AlphaAmmWithdraw"),
                ),
                (
                    "cpmm_swap_base_input",
                    30,
                    OneOf("decoded"),
                    Msg("CpmmSwapBaseInput"),
                ),
                (
                    "cpmm_swap_base_output",
                    31,
                    OneOf("decoded"),
                    Msg("CpmmSwapBaseOutput"),
                ),
                (
                    "cpmm_create_pool",
                    32,
                    OneOf("decoded"),
                    Msg("CpmmCreatePool"),
                ),
                (
                    "launch_lab_create",
                    40,
                    OneOf("decoded"),
                    Msg("LaunchLabCreatePool"),
                ),
                (
                    "launch_lab_buy_exact_in",
                    41,
                    OneOf("decoded"),
                    Msg("LaunchLabBuyExactIn"),
                ),
                (
                    "launch_lab_buy_exact_out",
                    42,
                    OneOf("decoded"),
                    Msg("LaunchLabBuyExactOut"),
                ),
                (
                    "launch_lab_sell_exact_in",
                    43,
                    OneOf("decoded"),
                    Msg("LaunchLabSellExactIn"),
                ),
                (
                    "launch_lab_sell_exact_out",
                    44,
                    OneOf("decoded"),
                    Msg("LaunchLabSellExactOut"),
                ),
                (
                    "launch_lab_migrate",
                    45,
                    OneOf("decoded"),
                    Msg("LaunchLabMigrate"),
                ),
                ("dbc_swap", 50, OneOf("decoded"), Msg("DbcSwap")),
                (
                    "dbc_initialize",
                    51,
                    OneOf("decoded"),
                    Msg("DbcInitializeVirtualPool"),
                ),
                (
                    "dbc_migrate",
                    52,
                    OneOf("decoded"),
                    Msg("DbcMigrateToDammV2"),
                ),
                ("damm_v2_swap", 60, OneOf("decoded"), Msg("DammV2Swap")),
                (
                    "damm_v2_create_pool",
                    61,
                    OneOf("decoded"),
                    Msg("DammV2CreatePool"),
                ),
                (
                    "damm_v2_add_liquidity",
                    62,
                    OneOf("decoded"),
                    Msg("DammV2AddLiquidity"),
                ),
                (
                    "damm_v2_remove_liquidity",
                    63,
                    OneOf("decoded"),
                    Msg("DammV2RemoveLiquidity"),
                ),
            ],
        ),
        // §2.9
        (
            "AlphaFunCreate",
            vec![
                ("name", 1, Plain, Str),
                ("symbol", 2, Plain, Str),
                ("uri", 3, Plain, Str),
            ],
        ),
        (
            "AlphaFunBuy",
            vec![("amount", 1, Plain, U64), ("max_sol_cost", 2, Plain, U64)],
        ),
        (
            "AlphaFunSell",
            vec![("amount", 1, Plain, U64), ("min_sol_output", 2, Plain, U64)],
        ),
        (
            "AlphaAmmBuy",
            vec![
                ("base_amount_out", 1, Plain, U64),
                ("max_quote_amount_in", 2, Plain, U64),
            ],
        ),
        (
            "AlphaAmmSell",
            vec![
                ("base_amount_in", 1, Plain, U64),
                ("min_quote_amount_out", 2, Plain, U64),
            ],
        ),
        (
            "AlphaAmmCreatePool",
            vec![
                ("index", 1, Plain, U32),
                ("base_amount", 2, Plain, U64),
                ("quote_amount", 3, Plain, U64),
            ],
        ),
        (
            "AlphaAmmDeposit",
            vec![
                ("lp_token_amount_out", 1, Plain, U64),
                ("max_base_amount_in", 2, Plain, U64),
                ("max_quote_amount_in", 3, Plain, U64),
            ],
        ),
        (
            "AlphaAmmWithdraw",
            vec![
                ("lp_token_amount_in", 1, Plain, U64),
                ("min_base_amount_out", 2, Plain, U64),
                ("min_quote_amount_out", 3, Plain, U64),
            ],
        ),
        (
            "CpmmSwapBaseInput",
            vec![
                ("amount_in", 1, Plain, U64),
                ("minimum_amount_out", 2, Plain, U64),
            ],
        ),
        (
            "CpmmSwapBaseOutput",
            vec![
                ("max_amount_in", 1, Plain, U64),
                ("amount_out", 2, Plain, U64),
            ],
        ),
        (
            "CpmmCreatePool",
            vec![
                ("init_amount_0", 1, Plain, U64),
                ("init_amount_1", 2, Plain, U64),
                ("open_time", 3, Plain, U64),
            ],
        ),
        (
            "LaunchLabCreatePool",
            vec![
                ("name", 1, Plain, Str),
                ("symbol", 2, Plain, Str),
                ("uri", 3, Plain, Str),
                ("decimals", 4, Plain, U32),
                ("total_supply", 5, Plain, U64),
            ],
        ),
        (
            "LaunchLabBuyExactIn",
            vec![
                ("amount_in", 1, Plain, U64),
                ("minimum_amount_out", 2, Plain, U64),
                ("share_fee_bps", 3, Plain, U64),
            ],
        ),
        (
            "LaunchLabBuyExactOut",
            vec![
                ("amount_out", 1, Plain, U64),
                ("maximum_amount_in", 2, Plain, U64),
                ("share_fee_bps", 3, Plain, U64),
            ],
        ),
        (
            "LaunchLabSellExactIn",
            vec![
                ("amount_in", 1, Plain, U64),
                ("minimum_amount_out", 2, Plain, U64),
                ("share_fee_bps", 3, Plain, U64),
            ],
        ),
        (
            "LaunchLabSellExactOut",
            vec![
                ("amount_out", 1, Plain, U64),
                ("maximum_amount_in", 2, Plain, U64),
                ("share_fee_bps", 3, Plain, U64),
            ],
        ),
        ("LaunchLabMigrate", vec![]),
        (
            "DbcSwap",
            vec![
                ("amount_in", 1, Plain, U64),
                ("minimum_amount_out", 2, Plain, U64),
            ],
        ),
        (
            "DbcInitializeVirtualPool",
            vec![("pool_config", 1, Plain, Bytes)],
        ),
        ("DbcMigrateToDammV2", vec![]),
        (
            "DammV2Swap",
            vec![
                ("amount_in", 1, Plain, U64),
                ("minimum_amount_out", 2, Plain, U64),
            ],
        ),
        ("DammV2CreatePool", vec![("config", 1, Plain, Bytes)]),
        (
            "DammV2AddLiquidity",
            vec![
                ("max_token_a_amount", 1, Plain, U64),
                ("max_token_b_amount", 2, Plain, U64),
                ("min_lp_amount", 3, Plain, U64),
            ],
        ),
        (
            "DammV2RemoveLiquidity",
            vec![
                ("lp_amount", 1, Plain, U64),
                ("min_token_a_amount", 2, Plain, U64),
                ("min_token_b_amount", 3, Plain, U64),
            ],
        ),
        // §2.10
        (
            "DeltaUpdate",
            vec![
                ("envelope", 1, Plain, Msg("DecodedTransaction")),
                (
                    "top_level_instruction",
                    2,
                    Plain,
                    Msg("DeltaTopLevelInstruction"),
                ),
                ("dex_legs", 3, Rep, Msg("DeltaDexLeg")),
                ("matched_leg_indices", 4, Rep, U32),
            ],
        ),
        (
            "DeltaDexLeg",
            vec![
                ("wrapped_program", 1, Plain, Enum("DexProgram")),
                ("instruction", 2, Plain, Msg("DecodedInstruction")),
                ("source", 3, Plain, Enum("DeltaLegSource")),
                ("top_level_instruction_index", 4, Plain, U32),
                ("route_step_index", 5, Plain, U32),
                ("swap_variant", 6, Plain, Str),
                ("logical_instruction_name", 7, Plain, Str),
                ("split_percent", 8, Opt, U32),
                ("split_bps", 9, Opt, U32),
                ("route_input_amount", 10, Opt, U64),
                ("route_output_amount", 11, Opt, U64),
            ],
        ),
        (
            "DeltaTopLevelInstruction",
            vec![
                ("instruction_name", 1, Plain, Str),
                ("instruction_index", 2, Plain, U32),
                ("raw_data", 3, Plain, Bytes),
                ("account_indices", 4, Rep, U32),
                ("resolved_accounts", 5, Rep, Str),
                ("named_accounts", 6, Rep, Msg("DeltaNamedAccount")),
                ("remaining_accounts", 7, Rep, Str),
                ("decoded_args", 8, Plain, SS),
                ("route", 9, Opt, Msg("DeltaRouteSummary")),
                ("decode_error", 10, Opt, Str),
            ],
        ),
        (
            "DeltaNamedAccount",
            vec![
                ("name", 1, Plain, Str),
                ("pubkey", 2, Plain, Str),
                ("writable", 3, Plain, Bool),
                ("signer", 4, Plain, Bool),
                // A bool field NAMED `optional` (spec: "optional 5 bool").
                ("optional", 5, Plain, Bool),
                ("expected_address", 6, Opt, Str),
            ],
        ),
        (
            "DeltaRouteSummary",
            vec![
                ("variant", 1, Plain, Str),
                ("route_plan_step_count", 2, Plain, U32),
                ("opaque_route_plan_bytes_len", 3, Plain, U32),
                ("exact_in_amount", 4, Opt, U64),
                ("exact_out_amount", 5, Opt, U64),
                ("quoted_in_amount", 6, Opt, U64),
                ("quoted_out_amount", 7, Opt, U64),
                ("slippage_bps", 8, Plain, U32),
                ("platform_fee_bps", 9, Plain, U32),
                ("positive_slippage_bps", 10, Opt, U32),
                ("shared_accounts_route_id", 11, Opt, U32),
                ("uses_token_ledger", 12, Plain, Bool),
                ("route_steps", 13, Rep, Msg("DeltaRouteStep")),
            ],
        ),
        (
            "DeltaRouteStep",
            vec![
                ("swap_variant", 1, Plain, Str),
                ("normalized_dex_label", 2, Opt, Str),
                ("split_percent", 3, Opt, U32),
                ("split_bps", 4, Opt, U32),
                ("input_index", 5, Plain, U32),
                ("output_index", 6, Plain, U32),
                ("swap_fields", 7, Plain, SS),
            ],
        ),
    ]
}

/// Every enum of the spec: name -> values (name, number).
fn spec_enums() -> Vec<(&'static str, Vec<(&'static str, i32)>)> {
    vec![
        // §2.1
        (
            "DexProgram",
            vec![
                ("DEX_PROGRAM_UNSPECIFIED", 0),
                ("ALPHA_FUN", 1),
                ("ALPHA_AMM", 2),
                ("BETA_CPMM", 3),
                ("BETA_LAUNCH_LAB", 4),
                ("GAMMA_DBC", 5),
                ("GAMMA_DAMM_V2", 6),
                ("DELTA_ALPHA_FUN", 7),
                ("DELTA_ALPHA_AMM", 8),
                ("DELTA_BETA_CPMM", 9),
                ("DELTA_BETA_LAUNCH_LAB", 10),
                ("DELTA_GAMMA_DBC", 11),
                ("DELTA_GAMMA_DAMM_V2", 12),
            ],
        ),
        // §2.10
        (
            "DeltaLegSource",
            vec![
                ("DELTA_LEG_SOURCE_UNSPECIFIED", 0),
                ("DELTA_LEG_SOURCE_CURRENT_TRANSACTION", 1),
                ("DELTA_LEG_SOURCE_INFERRED_ROUTE", 2),
                ("DELTA_LEG_SOURCE_EXECUTED_INNER", 3),
            ],
        ),
    ]
}

// ------------------------------------------------------------------------------------------------
// Descriptor checks.
// ------------------------------------------------------------------------------------------------

fn stream_file() -> FileDescriptorProto {
    let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("FILE_DESCRIPTOR_SET decodes");
    assert_eq!(set.file.len(), 1, "exactly one file (no imports)");
    let file = set.file.into_iter().next().expect("one file");
    assert_eq!(file.name(), "stream.proto");
    assert_eq!(file.package(), "stream");
    assert_eq!(file.syntax(), "proto3");
    assert!(file.dependency.is_empty(), "stream.proto imports nothing");
    file
}

/// Checks the key or value field of a map entry.
fn check_map_part(part: &FieldDescriptorProto, want: MapTy, at: &str) {
    match want {
        MapTy::Str => assert_eq!(
            part.r#type(),
            PType::String,
            "{at}: map {} type",
            part.name()
        ),
        MapTy::Msg(m) => {
            assert_eq!(
                part.r#type(),
                PType::Message,
                "{at}: map {} type",
                part.name()
            );
            assert_eq!(
                part.type_name(),
                format!(".stream.{m}"),
                "{at}: map {}",
                part.name()
            );
        }
    }
}

/// Checks one descriptor field against its spec entry; `msg` is the containing message.
fn check_field(msg: &DescriptorProto, f: &FieldDescriptorProto, spec: &Field) {
    let (name, number, label, ty) = *spec;
    let at = format!("{}.{}", msg.name(), name);
    assert_eq!(f.number(), number, "{at}: field number");

    // Type.
    match ty {
        Map(k, v) => {
            assert_eq!(
                f.label(),
                PLabel::Repeated,
                "{at}: a map is a repeated entry"
            );
            assert_eq!(
                f.r#type(),
                PType::Message,
                "{at}: a map is a repeated entry message"
            );
            let entry_name = f.type_name().rsplit('.').next().expect("type name");
            let entry = msg
                .nested_type
                .iter()
                .find(|n| n.name() == entry_name)
                .unwrap_or_else(|| panic!("{at}: map entry {entry_name} not nested"));
            assert!(
                entry.options.as_ref().is_some_and(|o| o.map_entry()),
                "{at}: map_entry"
            );
            let key = entry.field.iter().find(|e| e.name() == "key").expect("key");
            let value = entry
                .field
                .iter()
                .find(|e| e.name() == "value")
                .expect("value");
            check_map_part(key, k, &at);
            check_map_part(value, v, &at);
        }
        _ => {
            let (want, want_name) = match ty {
                U64 => (PType::Uint64, None),
                U32 => (PType::Uint32, None),
                I32 => (PType::Int32, None),
                Bool => (PType::Bool, None),
                Str => (PType::String, None),
                Bytes => (PType::Bytes, None),
                Msg(m) => (PType::Message, Some(format!(".stream.{m}"))),
                Enum(e) => (PType::Enum, Some(format!(".stream.{e}"))),
                Map(..) => unreachable!(),
            };
            assert_eq!(f.r#type(), want, "{at}: type");
            if let Some(want_name) = want_name {
                assert_eq!(f.type_name(), want_name, "{at}: type name");
            }
            // A nested map-entry message must never stand in for a plain message field.
            assert!(
                !f.type_name().contains("Entry"),
                "{at}: unexpected map entry"
            );
        }
    }

    // Label / presence / oneof membership.
    let oneof_name = f.oneof_index.map(|i| {
        msg.oneof_decl
            .get(usize::try_from(i).expect("oneof index fits usize"))
            .expect("oneof index in range")
            .name()
            .to_owned()
    });
    match label {
        Plain => {
            if !matches!(ty, Map(..)) {
                assert_eq!(f.label(), PLabel::Optional, "{at}: proto3 singular");
            }
            assert!(!f.proto3_optional(), "{at}: must NOT be `optional`");
            assert_eq!(oneof_name, None, "{at}: must not be in a oneof");
        }
        Opt => {
            assert_eq!(f.label(), PLabel::Optional, "{at}: label");
            assert!(f.proto3_optional(), "{at}: must be proto3 `optional`");
            assert_eq!(
                oneof_name.as_deref(),
                Some(format!("_{name}").as_str()),
                "{at}: synthetic"
            );
        }
        Rep => {
            assert_eq!(f.label(), PLabel::Repeated, "{at}: must be repeated");
            assert!(!f.proto3_optional(), "{at}: repeated is not optional");
            assert_eq!(oneof_name, None, "{at}: must not be in a oneof");
        }
        OneOf(o) => {
            assert_eq!(f.label(), PLabel::Optional, "{at}: oneof member label");
            assert!(!f.proto3_optional(), "{at}: oneof member is not `optional`");
            assert_eq!(oneof_name.as_deref(), Some(o), "{at}: oneof membership");
        }
    }
}

/// Checks that every message of the specification is in `file` with every one of its fields
/// unchanged (name, number, label, type, oneof), and that anything added is an addition only:
/// new fields use numbers above every number the specification gives that message, new oneof
/// members join with such numbers too, and nested types are only map entries. Panics naming the
/// first violation. The interface may grow, never change (docs/decisions.md).
fn check_messages(file: &FileDescriptorProto) {
    let spec = spec_messages();
    let in_proto: BTreeSet<&str> = file.message_type.iter().map(|m| m.name()).collect();
    let in_spec: BTreeSet<&str> = spec.iter().map(|(m, _)| *m).collect();
    assert_eq!(
        in_spec.len(),
        spec.len(),
        "spec table lists a message twice"
    );
    let missing: Vec<&&str> = in_spec.difference(&in_proto).collect();
    assert!(
        missing.is_empty(),
        "messages of the spec missing: {missing:?}"
    );

    let mut checked_fields = 0;
    for (msg_name, fields) in &spec {
        let msg = file
            .message_type
            .iter()
            .find(|m| m.name() == *msg_name)
            .expect("present");
        checked_fields += check_message(msg, msg_name, fields);
    }
    assert_eq!(
        checked_fields, 163,
        "the spec tables have 163 fields in all"
    );
}

/// One message: the spec's fields unchanged, additions above the spec's numbers. Returns the
/// number of spec fields checked.
fn check_message(msg: &DescriptorProto, msg_name: &str, fields: &[Field]) -> usize {
    let got: BTreeMap<&str, &FieldDescriptorProto> =
        msg.field.iter().map(|f| (f.name(), f)).collect();
    assert_eq!(
        got.len(),
        msg.field.len(),
        "{msg_name}: duplicate field name"
    );
    for spec_field in fields {
        let field = got
            .get(spec_field.0)
            .unwrap_or_else(|| panic!("{msg_name}.{}: field of the spec missing", spec_field.0));
        check_field(msg, field, spec_field);
    }
    let highest_spec_number = fields.iter().map(|f| f.1).max().unwrap_or(0);
    let spec_names: BTreeSet<&str> = fields.iter().map(|f| f.0).collect();
    for added in msg.field.iter().filter(|f| !spec_names.contains(f.name())) {
        assert!(
            added.number() > highest_spec_number,
            "{msg_name}.{}: added field numbered {}, a number the spec uses or reserves below {}",
            added.name(),
            added.number(),
            highest_spec_number + 1
        );
    }

    // Oneofs: at least the spec's real oneofs, plus one synthetic `_x` per proto3 optional.
    let mut want_oneofs: BTreeSet<String> = BTreeSet::new();
    for (name, _, label, _) in fields {
        match label {
            OneOf(o) => {
                want_oneofs.insert((*o).to_owned());
            }
            Opt => {
                want_oneofs.insert(format!("_{name}"));
            }
            Plain | Rep => {}
        }
    }
    let got_oneofs: BTreeSet<String> = msg.oneof_decl.iter().map(|o| o.name().to_owned()).collect();
    let missing: Vec<&String> = want_oneofs.difference(&got_oneofs).collect();
    assert!(
        missing.is_empty(),
        "{msg_name}: oneofs missing: {missing:?}"
    );

    // Only map entries may be nested, one per map field (spec or added).
    let maps = msg
        .field
        .iter()
        .filter(|f| {
            f.r#type() == PType::Message
                && msg
                    .nested_type
                    .iter()
                    .any(|n| f.type_name().ends_with(&format!(".{}", n.name())))
        })
        .count();
    assert_eq!(
        msg.nested_type.len(),
        maps,
        "{msg_name}: unexpected nested messages"
    );
    assert!(
        msg.nested_type
            .iter()
            .all(|n| n.options.as_ref().is_some_and(|o| o.map_entry())),
        "{msg_name}: a nested message that is not a map entry"
    );
    assert!(
        msg.enum_type.is_empty(),
        "{msg_name}: unexpected nested enums"
    );
    fields.len()
}

/// Every enum of the spec present with its values (names, numbers, order) first and unchanged;
/// added values only after them, numbered above every spec value.
fn check_enums(file: &FileDescriptorProto) {
    let spec = spec_enums();
    for (enum_name, values) in &spec {
        let e = file
            .enum_type
            .iter()
            .find(|e| e.name() == *enum_name)
            .unwrap_or_else(|| panic!("enum {enum_name} of the spec missing"));
        let got: Vec<(&str, i32)> = e.value.iter().map(|v| (v.name(), v.number())).collect();
        assert!(
            got.len() >= values.len(),
            "{enum_name}: values of the spec missing"
        );
        assert_eq!(
            &got[..values.len()],
            &values[..],
            "{enum_name}: values (names, numbers, order) differ"
        );
        let highest = values.iter().map(|v| v.1).max().unwrap_or(0);
        for (name, number) in &got[values.len()..] {
            assert!(
                *number > highest,
                "{enum_name}.{name}: added value numbered {number}, not above the spec's {highest}"
            );
        }
    }
}

#[test]
fn messages_keep_every_spec_field() {
    check_messages(&stream_file());
}

#[test]
fn enums_keep_every_spec_value() {
    check_enums(&stream_file());
}

/// `check` on `file` after `change`, as Ok (passed) or Err (the violation's message).
fn verdict(
    change: impl FnOnce(&mut FileDescriptorProto),
    check: fn(&FileDescriptorProto),
) -> Result<(), String> {
    let mut file = stream_file();
    change(&mut file);
    std::panic::catch_unwind(move || check(&file)).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "panicked".to_owned())
    })
}

fn message<'a>(file: &'a mut FileDescriptorProto, name: &str) -> &'a mut DescriptorProto {
    file.message_type
        .iter_mut()
        .find(|m| m.name() == name)
        .expect("message")
}

fn added_field(name: &str, number: i32) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.to_owned()),
        number: Some(number),
        label: Some(PLabel::Repeated as i32),
        r#type: Some(PType::Bytes as i32),
        json_name: Some(name.to_owned()),
        ..FieldDescriptorProto::default()
    }
}

#[test]
fn an_added_field_with_a_new_number_passes() {
    let added = |file: &mut FileDescriptorProto| {
        let tx = message(file, "DecodedTransaction");
        tx.field.push(added_field("hypothetical_addition", 100));
    };
    assert_eq!(verdict(added, check_messages), Ok(()));
}

#[test]
fn a_renumbered_spec_field_fails() {
    let renumbered = |file: &mut FileDescriptorProto| {
        let tx = message(file, "DecodedTransaction");
        let signature = tx
            .field
            .iter_mut()
            .find(|f| f.name() == "signature")
            .expect("signature");
        signature.number = Some(99);
    };
    let error = verdict(renumbered, check_messages).expect_err("renumbering must fail");
    assert!(error.contains("signature"), "{error}");
}

#[test]
fn an_added_field_reusing_a_spec_number_fails() {
    let reused = |file: &mut FileDescriptorProto| {
        let request = message(file, "SubscribeRequest");
        request.field.push(added_field("resume_token", 2));
    };
    let error = verdict(reused, check_messages).expect_err("a spec number must not be reused");
    assert!(error.contains("resume_token"), "{error}");
}

#[test]
fn a_removed_spec_field_fails() {
    let removed = |file: &mut FileDescriptorProto| {
        message(file, "SlotNotification").field.clear();
    };
    let error = verdict(removed, check_messages).expect_err("removal must fail");
    assert!(error.contains("SlotNotification.slot"), "{error}");
}

#[test]
fn added_enum_values_pass_after_the_spec_and_renumbered_ones_fail() {
    let program_enum = |file: &mut FileDescriptorProto| -> usize {
        file.enum_type
            .iter()
            .position(|e| e.name() == "DexProgram")
            .expect("DexProgram")
    };
    let appended = |file: &mut FileDescriptorProto| {
        let index = program_enum(file);
        let values = &mut file.enum_type[index].value;
        let mut added = values[0].clone();
        added.name = Some("NEW_PROGRAM".to_owned());
        added.number = Some(1_000);
        values.push(added);
    };
    assert_eq!(verdict(appended, check_enums), Ok(()));
    let renumbered = |file: &mut FileDescriptorProto| {
        let index = program_enum(file);
        file.enum_type[index].value[1].number = Some(1_000);
    };
    assert!(verdict(renumbered, check_enums).is_err());
}

#[test]
fn service_matches_spec() {
    // §4.1: `stream.Stream/SubscribeDecoded`, bidirectional streaming.
    let file = stream_file();
    let svc = file
        .service
        .iter()
        .find(|s| s.name() == "Stream")
        .expect("service Stream");
    let m = svc
        .method
        .iter()
        .find(|m| m.name() == "SubscribeDecoded")
        .expect("method SubscribeDecoded");
    assert_eq!(m.name(), "SubscribeDecoded");
    assert_eq!(m.input_type(), ".stream.SubscribeRequest");
    assert_eq!(m.output_type(), ".stream.SubscribeUpdate");
    assert!(m.client_streaming(), "client stream of SubscribeRequest");
    assert!(m.server_streaming(), "server stream of SubscribeUpdate");
    // The generated tonic path matches the method string of §4.1.
    assert_eq!(
        <stream_proto::stream::stream_server::StreamServer<Unimplemented> as tonic::server::NamedService>::NAME,
        "stream.Stream"
    );
}

/// Only used to name a concrete `StreamServer<T>` in [`service_matches_spec`].
struct Unimplemented;

#[tonic::async_trait]
impl stream_proto::stream::stream_server::Stream for Unimplemented {
    type SubscribeDecodedStream = tonic::codegen::BoxStream<SubscribeUpdate>;

    async fn subscribe_decoded(
        &self,
        _request: tonic::Request<tonic::Streaming<SubscribeRequest>>,
    ) -> Result<tonic::Response<Self::SubscribeDecodedStream>, tonic::Status> {
        Err(tonic::Status::unimplemented("test stub"))
    }
}

// ------------------------------------------------------------------------------------------------
// proto3 JSON mapping.
// ------------------------------------------------------------------------------------------------

fn sample_update() -> SubscribeUpdate {
    SubscribeUpdate {
        update: Some(Update::Transaction(DecodedTransaction {
            slot: 312_345_678_901,
            signature: (0u8..64).collect(),
            tx_index: 3,
            signer: vec![7; 32],
            account_keys: vec![vec![7; 32], (100u8..132).collect()],
            decoded_instructions: vec![DecodedInstruction {
                program: DexProgram::AlphaFun.into(),
                instruction_name: "buy".to_owned(),
                instruction_index: 2,
                account_indices: vec![0, 1],
                raw_data: vec![
                    0x66, 0x06, 0x3d, 0x12, 0x01, 0xda, 0xeb, 0xea, // discriminator
                    0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, // amount 1_000_000
                    0, 0xf2, 0x05, 0x2a, 1, 0, 0, 0, // max_sol_cost 5_000_000_000
                ],
                decoded: Some(Decoded::AlphaFunBuy(AlphaFunBuy {
                    amount: 1_000_000,
                    max_sol_cost: 5_000_000_000,
                })),
            }],
            uses_lookup_tables: true,
            matched_filters: vec!["copy-1".to_owned()],
            server_timing: None,
            // Additions beyond the specification (issue 20) keep their defaults: not printed.
            ..Default::default()
        })),
        ..Default::default()
    }
}

#[test]
fn json_follows_proto3_mapping() {
    let value = serde_json::to_value(sample_update()).expect("serialize");
    // Expected base64 strings computed independently (standard alphabet, padded).
    let want = json!({
        "transaction": {
            "slot": "312345678901",
            "signature": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==",
            "txIndex": 3,
            "signer": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
            "accountKeys": [
                "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
                "ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM="
            ],
            "decodedInstructions": [{
                "program": "ALPHA_FUN",
                "instructionName": "buy",
                "instructionIndex": 2,
                "accountIndices": [0, 1],
                "rawData": "ZgY9EgHa6+pAQg8AAAAAAADyBSoBAAAA",
                "alphaFunBuy": { "amount": "1000000", "maxSolCost": "5000000000" }
            }],
            "usesLookupTables": true,
            "matchedFilters": ["copy-1"]
        }
    });
    assert_eq!(value, want);

    // Spot checks of the points the mapping is about, for readable failures.
    let tx = &value["transaction"];
    assert!(tx["slot"].is_string(), "uint64 is a JSON string");
    assert!(tx.get("server_timing").is_none() && tx.get("serverTiming").is_none());
    let ix = &tx["decodedInstructions"][0];
    assert_eq!(ix["program"], "ALPHA_FUN", "enum by name");
    assert!(
        ix.get("alphaFunBuy").is_some(),
        "oneof member keyed by its lowerCamelCase name"
    );
    assert!(
        ix.get("decoded").is_none(),
        "the oneof name itself is not a key"
    );
}

#[test]
fn json_round_trips() {
    let update = sample_update();
    let text = serde_json::to_string(&update).expect("serialize");
    let back: SubscribeUpdate = serde_json::from_str(&text).expect("deserialize");
    assert_eq!(back, update);

    // Parsers must also accept the original proto field names (proto3 JSON mapping).
    let by_proto_names: SubscribeUpdate = serde_json::from_value(json!({
        "transaction": {
            "slot": "312345678901",
            "tx_index": 3,
            "uses_lookup_tables": true,
            "decoded_instructions": [{
                "program": "ALPHA_FUN",
                "alpha_fun_buy": { "amount": "1000000", "max_sol_cost": 5000000000u64 }
            }]
        }
    }))
    .expect("deserialize proto names");
    let Some(Update::Transaction(tx)) = by_proto_names.update else {
        panic!("expected a transaction");
    };
    assert_eq!(
        (tx.slot, tx.tx_index, tx.uses_lookup_tables),
        (312_345_678_901, 3, true)
    );
    assert_eq!(
        tx.decoded_instructions[0].decoded,
        Some(Decoded::AlphaFunBuy(AlphaFunBuy {
            amount: 1_000_000,
            max_sol_cost: 5_000_000_000
        }))
    );

    // And the binary encoding round-trips too.
    let bytes = update.encode_to_vec();
    assert_eq!(
        SubscribeUpdate::decode(bytes.as_slice()).expect("decode"),
        update
    );
}

#[test]
fn json_presence_maps_and_repeated_enums() {
    // `optional` fields are emitted when set, even to their default value; maps are JSON objects.
    let req = SubscribeRequest {
        subscriptions: [(
            "f1".to_owned(),
            ProgramFilter {
                programs: vec![
                    DexProgram::AlphaFun.into(),
                    DexProgram::DeltaGammaDammV2.into(),
                ],
                ..ProgramFilter::default()
            },
        )]
        .into_iter()
        .collect(),
        ping_id: Some(0),
        ..Default::default()
    };
    let value = serde_json::to_value(&req).expect("serialize");
    assert_eq!(
        value,
        json!({
            "subscriptions": { "f1": { "programs": ["ALPHA_FUN", "DELTA_GAMMA_DAMM_V2"] } },
            "pingId": 0
        })
    );
    assert_eq!(
        serde_json::from_value::<SubscribeRequest>(value).expect("deserialize"),
        req
    );

    // Unset `optional` is omitted; the bool field named `optional` keeps its name.
    let acct = DeltaNamedAccount {
        optional: true,
        ..DeltaNamedAccount::default()
    };
    assert_eq!(
        serde_json::to_value(&acct).expect("serialize"),
        json!({ "optional": true })
    );
}
