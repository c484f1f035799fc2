//! Conversions of Python values: JSON documents (schemas and llguidance
//! requests given as `dict`/`list` or as text), token ids, paths.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use structgen::toktrie::TokenId;

/// The deepest a Python value converted to JSON may nest (a cycle, such as
/// a list that contains itself, stops here too).
const MAX_DEPTH: usize = 512;

/// A JSON document given as a `str`/`bytes` of JSON text or as Python
/// values (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`).
pub(crate) enum JsonInput {
    Text(String),
    Value(Value),
}

impl JsonInput {
    /// `obj` as JSON; `what` names it in errors.
    ///
    /// # Errors
    /// `TypeError` for a value JSON cannot hold (a set, an object), with
    /// the path to it; `ValueError` for a float that is not finite.
    pub(crate) fn extract(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<JsonInput> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(JsonInput::Text(s.to_cow()?.into_owned()));
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            let text = std::str::from_utf8(b.as_bytes())
                .map_err(|e| PyValueError::new_err(format!("{what} is not UTF-8: {e}")))?;
            return Ok(JsonInput::Text(text.to_owned()));
        }
        Ok(JsonInput::Value(to_json(obj, what, "", 0)?))
    }
}

/// A Python value as JSON; `path` is the JSON pointer of `obj` in the
/// document, for errors.
fn to_json(obj: &Bound<'_, PyAny>, what: &str, path: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "{what} nests deeper than {MAX_DEPTH} levels at \"{path}\" (or contains itself)"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Beyond 64 bits: read as the same digits in a JSON text would be
        // (serde_json makes them a float), so a schema given as a dict and
        // as text compile alike.
        let text = obj.str()?.to_cow()?.into_owned();
        return serde_json::from_str(&text).map_err(|e| {
            PyValueError::new_err(format!("{what}: the integer at \"{path}\" is too large: {e}"))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v).map(Value::Number).ok_or_else(|| {
            PyValueError::new_err(format!("{what}: {v} at \"{path}\" is not a JSON number"))
        });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{what}: the key {} at \"{path}\" is not a string",
                    k.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string())
                )));
            };
            let key = key.to_cow()?.into_owned();
            let child = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
            let value = to_json(&v, what, &child, depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(to_json(&item?, what, &format!("{path}/{i}"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: a {} at \"{path}\" has no JSON form (use dict, list, str, int, float, bool or None)",
        crate::array::type_name(obj)
    )))
}

/// A sequence of token ids (a list, a tuple, a numpy array: anything
/// iterable of ints).
///
/// # Errors
/// `TypeError`/`OverflowError` for an item that is not an int in `0..2^32`.
pub(crate) fn token_ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<TokenId>> {
    if let Ok(list) = obj.cast::<PyList>() {
        return list.iter().map(|t| t.extract::<u32>().map(TokenId)).collect();
    }
    obj.try_iter()?.map(|t| t?.extract::<u32>().map(TokenId)).collect()
}

/// The ids as a Python list of ints.
pub(crate) fn id_list(ids: impl IntoIterator<Item = TokenId>) -> Vec<u32> {
    ids.into_iter().map(|t| t.0).collect()
}
