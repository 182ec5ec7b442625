//! Encoding of header values that mirror body values (`Mcp-Name`,
//! `Mcp-Param-*`): plain text when it is safe visible ASCII, otherwise the
//! `=?base64?…?=` sentinel form around the exact UTF-8 bytes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Largest integer that survives a round trip through an IEEE double.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Whether `s` may travel as plain header text.
pub fn is_plain_safe(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) && !s.starts_with(PREFIX)
}

pub fn encode_str(s: &str) -> String {
    if is_plain_safe(s) { s.to_string() } else { format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(s.as_bytes())) }
}

/// Encode an integer; values beyond ±(2^53−1) are refused, never rounded.
/// An integer a header cannot carry exactly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0} is outside ±{MAX_SAFE_INTEGER} and cannot be mirrored in a header")]
pub struct OutOfRange(pub i64);

pub fn encode_int(i: i64) -> Result<String, OutOfRange> {
    if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i) { Ok(i.to_string()) } else { Err(OutOfRange(i)) }
}

pub fn encode_bool(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// Decode a received value: only the exact lowercase markers mean base64.
pub fn decode(v: &str) -> Result<String, String> {
    match v.strip_prefix(PREFIX).and_then(|r| r.strip_suffix(SUFFIX)) {
        Some(inner) => {
            let bytes = STANDARD.decode(inner).map_err(|e| format!("malformed base64 in `{v}`: {e}"))?;
            String::from_utf8(bytes).map_err(|_| format!("base64 in `{v}` is not UTF-8"))
        }
        None => Ok(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_encoded_forms() {
        assert_eq!(encode_str("get_weather"), "get_weather");
        assert_eq!(encode_str("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(encode_str(""), "=?base64??=");
        assert_eq!(encode_str(" x"), "=?base64?IHg=?=");
        assert_eq!(encode_str("a\tb"), "=?base64?YQli?=");
        assert_eq!(encode_str("line\r\n"), "=?base64?bGluZQ0K?=");
        // A literal that looks like the sentinel is itself encoded.
        let lit = "=?base64?SGVsbG8=?=";
        let enc = encode_str(lit);
        assert_ne!(enc, lit);
        assert_eq!(decode(&enc).unwrap(), lit);
    }

    #[test]
    fn decoding_is_exact() {
        assert_eq!(decode("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode("=?BASE64?SGVsbG8=?=").unwrap(), "=?BASE64?SGVsbG8=?=");
        assert_eq!(decode("=?Base64?SGVsbG8=?=").unwrap(), "=?Base64?SGVsbG8=?=");
        assert_eq!(decode("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=", "no suffix: a literal");
        assert!(decode("=?base64?***?=").is_err());
        assert!(decode("=?base64?SGVsbG8?=").is_err(), "bad padding");
        assert!(decode("=?base64?//79?=").is_err(), "not UTF-8");
    }

    #[test]
    fn what_goes_plain_and_what_is_encoded() {
        // Visible ASCII travels as it is.
        let visible: String = (0x21u8..=0x7e).map(char::from).collect();
        assert_eq!(encode_str(&visible), visible);
        assert_eq!(encode_str("us-west1"), "us-west1");
        // Unicode, controls and surrounding whitespace are encoded, never trimmed.
        assert_eq!(encode_str("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_str(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_str("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_str("\u{1}"), "=?base64?AQ==?=");
        assert_eq!(encode_str("a b"), "=?base64?YSBi?=", "an inner space is not visible ASCII");
        // A value that looks like the sentinel is encoded, so it stays a literal.
        assert_eq!(encode_str("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert_eq!(decode(&encode_str("=?base64?SGVsbG8=?=")).unwrap(), "=?base64?SGVsbG8=?=");
    }

    /// A small deterministic generator (xorshift), so the property test
    /// needs no extra crate and every run sees the same strings.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn string(&mut self) -> String {
            const PIECES: [&str; 8] = ["=?base64?", "?=", " ", "\t", "\r\n", "é", "日", "🙂"];
            let len = (self.next() % 12) as usize;
            let mut s = String::new();
            for _ in 0..len {
                match self.next() % 4 {
                    0 => s.push_str(PIECES[(self.next() % PIECES.len() as u64) as usize]),
                    1 => s.push(char::from((self.next() % 0x80) as u8)),
                    2 => s.push(char::from(0x21 + (self.next() % 94) as u8)),
                    _ => s.push(char::from_u32((self.next() % 0x3_0000) as u32).unwrap_or('x')),
                }
            }
            s
        }
    }

    #[test]
    fn property_encoding_round_trips_and_is_header_safe() {
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let s = g.string();
            let e = encode_str(&s);
            assert_eq!(decode(&e).unwrap(), s, "round trip of {s:?}");
            assert!(!e.is_empty() && e.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{e:?} is not plain visible ASCII");
            assert_eq!(e == s, is_plain_safe(&s), "plain exactly when safe: {s:?}");
        }
    }

    #[test]
    fn integers_within_safe_range_only() {
        assert_eq!(encode_int(MAX_SAFE_INTEGER).unwrap(), "9007199254740991");
        assert_eq!(encode_int(-MAX_SAFE_INTEGER).unwrap(), "-9007199254740991");
        assert!(encode_int(MAX_SAFE_INTEGER + 1).is_err());
        assert!(encode_int(-MAX_SAFE_INTEGER - 1).is_err());
        assert!(encode_int(i64::MAX).is_err());
        assert_eq!(encode_int(42).unwrap(), "42");
        assert_eq!(encode_int(-7).unwrap(), "-7");
        assert_eq!(encode_bool(true), "true");
        assert_eq!(encode_bool(false), "false");
    }

    #[test]
    fn roundtrip_many_strings() {
        let samples = ["", " ", "a", "é", "日本", "\u{0}", "\u{7f}", "x ", "=?base64?", "?=", "plain-ASCII_1.2", "tab\there", "🙂"];
        for s in samples {
            assert_eq!(decode(&encode_str(s)).unwrap(), s, "{s:?}");
        }
        // Every single byte-range char round-trips.
        for c in (0u32..0x300).filter_map(char::from_u32) {
            let s = format!("{c}{c}");
            assert_eq!(decode(&encode_str(&s)).unwrap(), s);
        }
    }
}
