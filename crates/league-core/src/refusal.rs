//! A refusal of an event or results file's value: [`SpecError`], the field and why, and the
//! checks both [`crate::spec`] and [`crate::chain`] make with it.

use chuhe_league::points::Points;

/// A spec refused: the field and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct SpecError {
    pub field: String,
    pub why: String,
}

pub(crate) fn bad(field: impl Into<String>, why: impl Into<String>) -> SpecError {
    SpecError {
        field: field.into(),
        why: why.into(),
    }
}

/// A number of points that must be whole or half (`1`, `0.5`), as halves.
pub(crate) fn half_points(field: &str, v: f64) -> Result<Points, SpecError> {
    let h = v * 2.0;
    if !h.is_finite() || h.fract() != 0.0 || h.abs() > 1e6 {
        return Err(bad(field, format!("{v} is not a whole or half point")));
    }
    Ok(Points::from_halves(h as i32))
}
