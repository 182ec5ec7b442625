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
pub fn encode_int(i: i64) -> Result<String, String> {
    if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i) {
        Ok(i.to_string())
    } else {
        Err(format!("{i} is outside ±{MAX_SAFE_INTEGER} and cannot be mirrored in a header"))
    }
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
        assert!(decode("=?base64?***?=").is_err());
    }

    #[test]
    fn integers_within_safe_range_only() {
        assert_eq!(encode_int(MAX_SAFE_INTEGER).unwrap(), "9007199254740991");
        assert_eq!(encode_int(-MAX_SAFE_INTEGER).unwrap(), "-9007199254740991");
        assert!(encode_int(MAX_SAFE_INTEGER + 1).is_err());
        assert_eq!(encode_bool(true), "true");
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
