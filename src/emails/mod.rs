//! Emails as prospects receive them: templates with `{{variables}}`, rendering to plain text
//! and HTML with the compliance footer, and the checks `check_first_email` runs.

pub mod checks;
pub mod render;
pub mod template;
