//! Command lines: split into argv as a shell would (quotes, backslashes,
//! nothing expanded), and words quoted for a POSIX shell (reproducers).

/// A command line that cannot be split into words.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CommandLineError(&'static str);

/// Split a command line into argv: whitespace separates words; single quotes
/// keep text literally; double quotes allow `\"` and `\\`; a backslash
/// outside quotes escapes the next character.
pub fn split_command(line: &str) -> Result<Vec<String>, CommandLineError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(CommandLineError("unterminated single quote in command")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x)
                            }
                            None => return Err(CommandLineError("unterminated double quote in command")),
                        },
                        Some(x) => cur.push(x),
                        None => return Err(CommandLineError("unterminated double quote in command")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    if out.is_empty() {
        return Err(CommandLineError("empty command"));
    }
    Ok(out)
}

/// Quote one word for a POSIX shell (for reproducers).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_handles_quotes() {
        assert_eq!(split_command("a b  'c d' \"e \\\"f\" g\\ h").unwrap(), vec!["a", "b", "c d", "e \"f", "g h"]);
        assert!(split_command("'x").is_err());
        assert!(split_command("   ").is_err());
    }

    #[test]
    fn shell_quote_roundtrip_shape() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
