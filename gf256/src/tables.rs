//! The field's multiplication tables, computed at compile time from the polynomial: the nibble
//! tables the kernels look up (`LOW[c][x] = c·x`, `HIGH[c][x] = c·(x << 4)`, so
//! `c·b = LOW[c][b & 15] ^ HIGH[c][b >> 4]`), and scalar multiply, inverse and divide.

/// The field polynomial's low byte (x⁸ = x⁴ + x³ + x² + 1).
const POLYNOMIAL_LOW: u8 = 0x1D;

/// Shift-and-add multiplication, the definition the tables are built from.
const fn slow_mul(mut a: u8, mut b: u8) -> u8 {
    let mut product = 0u8;
    while b != 0 {
        if b & 1 == 1 {
            product ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= POLYNOMIAL_LOW;
        }
        b >>= 1;
    }
    product
}

const fn nibble_table(shift: u32) -> [[u8; 16]; 256] {
    let mut table = [[0u8; 16]; 256];
    let mut c = 0;
    while c < 256 {
        let mut x = 0;
        while x < 16 {
            table[c][x] = slow_mul(c as u8, (x as u8) << shift);
            x += 1;
        }
        c += 1;
    }
    table
}

/// `LOW[c][x] = c · x` for the low nibble `x`.
pub(crate) static LOW: [[u8; 16]; 256] = nibble_table(0);
/// `HIGH[c][x] = c · (x << 4)` for the high nibble `x`.
pub(crate) static HIGH: [[u8; 16]; 256] = nibble_table(4);

const fn inverse_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut a = 1;
    while a < 256 {
        let mut b = 1;
        while b < 256 {
            if slow_mul(a as u8, b as u8) == 1 {
                table[a] = b as u8;
                break;
            }
            b += 1;
        }
        a += 1;
    }
    table
}

static INVERSE: [u8; 256] = inverse_table();

/// `a · b`.
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    LOW[usize::from(a)][usize::from(b & 15)] ^ HIGH[usize::from(a)][usize::from(b >> 4)]
}

/// The multiplicative inverse of `a`; `None` for zero.
#[inline]
pub fn inverse(a: u8) -> Option<u8> {
    (a != 0).then(|| INVERSE[usize::from(a)])
}

/// `a / b`; `None` when `b` is zero.
#[inline]
pub fn div(a: u8, b: u8) -> Option<u8> {
    inverse(b).map(|inverse| mul(a, inverse))
}
