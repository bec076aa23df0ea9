//! Secrets from the operating system's cryptographic generator (`getrandom`: the
//! `getrandom(2)` system call on Linux, `getentropy` on macOS, `ProcessPrng` on Windows),
//! and a comparison that takes the same time wherever two secrets differ.

use std::fmt;

use subtle::ConstantTimeEq;

/// Bytes in a [`Token`]: 128 bits, beyond guessing.
pub(crate) const TOKEN_BYTES: usize = 16;

/// A 128-bit secret a worker proves itself with (its parent hands it over in the worker's
/// environment, which only the same user can read).
#[derive(Clone, Copy)]
pub(crate) struct Token([u8; TOKEN_BYTES]);

impl Token {
    /// A fresh token from the OS's cryptographic generator.
    pub(crate) fn generate() -> std::io::Result<Token> {
        let mut bytes = [0u8; TOKEN_BYTES];
        fill(&mut bytes)?;
        Ok(Token(bytes))
    }

    /// Parses the hex text [`Token`]'s `Display` writes; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Token> {
        if text.len() != 2 * TOKEN_BYTES || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut bytes = [0u8; TOKEN_BYTES];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
            let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
            *byte = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(Token(bytes))
    }

    /// Whether `claimed` (text a peer sent) is this token. Constant time in where the bytes
    /// differ (`subtle`), so the answer's timing tells a guesser nothing about its guess; a
    /// claim of the wrong length or not hex is refused at once (that reveals nothing secret).
    pub(crate) fn matches(&self, claimed: &str) -> bool {
        Token::parse(claimed).is_some_and(|c| bool::from(self.0.ct_eq(&c.0)))
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Token {
    /// Never the secret itself (a token in a log would let its reader join the pool).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}

/// Fills `bytes` from the OS's cryptographic generator.
pub(crate) fn fill(bytes: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(bytes).map_err(|e| std::io::Error::other(format!("the OS random generator failed: {e}")))
}

/// 64 bits from the OS's cryptographic generator.
pub(crate) fn random_u64() -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    fill(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_through_text_and_differ() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        let text = a.to_string();
        assert_eq!(text.len(), 32);
        assert!(a.matches(&text));
        assert!(!b.matches(&text), "two 128-bit tokens from the OS generator collided");
        assert!(!a.matches(&text.to_uppercase().replace(|c: char| c.is_ascii_digit(), "g")));
        assert!(!a.matches(&text[..31]), "a prefix is not the token");
        assert!(!a.matches(""));
        assert!(!a.matches(&format!("{text}0")));
        assert_eq!(format!("{a:?}"), "Token(..)", "Debug never shows the secret");
    }

    #[test]
    fn one_flipped_bit_anywhere_is_refused() {
        let t = Token::generate().unwrap();
        for i in 0..TOKEN_BYTES * 8 {
            let mut bytes = t.0;
            bytes[i / 8] ^= 1 << (i % 8);
            assert!(!t.matches(&Token(bytes).to_string()), "bit {i}");
        }
    }
}
