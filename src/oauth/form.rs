//! Strict parsing of `application/x-www-form-urlencoded` bodies and query strings (RFC 6749
//! §3.1: parameters without a value are treated as omitted; parameters must not be repeated).

use super::error::OAuthError;

/// Decoded parameters, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    pairs: Vec<(String, String)>,
}

impl Form {
    /// Parses a query string or form body. Empty values are dropped (RFC 6749 §3.1).
    pub fn parse(raw: &[u8]) -> Form {
        let mut pairs = crate::form::parse(raw);
        pairs.retain(|(_, v)| !v.is_empty());
        Form { pairs }
    }

    /// The value of `name`, refusing a repeated parameter.
    pub fn get(&self, name: &str) -> Result<Option<&str>, OAuthError> {
        let mut values = self.pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(OAuthError::request(format!("The {name} parameter is repeated.")));
        }
        Ok(first)
    }

    /// The value of `name`, which must be present.
    pub fn require(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name)?.ok_or_else(|| OAuthError::request(format!("The {name} parameter is required.")))
    }

    /// How many times `name` is given with a value.
    pub fn count(&self, name: &str) -> usize {
        self.pairs.iter().filter(|(k, _)| k == name).count()
    }

    /// Whether `name` is present at all.
    pub fn has(&self, name: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == name)
    }
}

/// Whether a `Content-Type` is `application/x-www-form-urlencoded` (parameters allowed).
pub fn is_form_content_type(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/x-www-form-urlencoded")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_strictly() {
        let f = Form::parse(b"a=1&b=&c=x%20y&d=2&d=3");
        assert_eq!(f.get("a").unwrap(), Some("1"));
        assert_eq!(f.get("b").unwrap(), None, "an empty value is absent");
        assert_eq!(f.get("c").unwrap(), Some("x y"));
        assert!(f.get("d").is_err());
        // RFC 6749 §3.1: a parameter given twice is refused, however its name is encoded.
        let f = Form::parse(b"code=a&c%6Fde=b&grant_type=x&grant+type=y&redirect_uri=z");
        assert!(f.get("code").is_err());
        assert_eq!(f.get("grant_type").unwrap(), Some("x"), "a space is not an underscore");
        assert_eq!(f.get("redirect_uri").unwrap(), Some("z"));
        assert!(f.require("z").is_err());
        assert!(is_form_content_type(Some("application/x-www-form-urlencoded; charset=UTF-8")));
        assert!(!is_form_content_type(Some("application/json, application/x-www-form-urlencoded")));
        assert!(!is_form_content_type(None));
    }
}
