//! Arrays from Python: numpy arrays and CPU torch tensors seen through
//! DLPack, checked (dimensions, dtype, device, alignment, strides) and
//! handed out as Rust slices, one per row.
//!
//! Every `unsafe` block of the extension is here. The argument is the same
//! for all of them: a DLPack capsule named `dltensor` owns a
//! `DLManagedTensor` that describes memory the producer keeps alive until
//! the capsule is destroyed (we never rename it "used", so its destructor
//! frees it); a [`View`] holds the capsule for as long as any slice of it
//! lives, and hands out only rows it checked to lie inside the tensor,
//! aligned for their element type, and pairwise disjoint.
//!
//! What Rust cannot check: that no other thread writes the same row at the
//! same time (a data race in the caller's program, as with any C
//! extension), and that nobody resizes the tensor's storage while a call
//! runs. The Python documentation says both.

use std::ffi::c_void;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// DLPack's device (`DLDevice`).
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// DLPack's element type (`DLDataType`): `code` 0 int, 1 uint, 2 float,
/// 4 bfloat; `bits` per lane; `lanes` (1 for plain arrays).
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// DLPack's tensor (`DLTensor`), as laid out by the C header.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    /// In elements; null for a compact row-major tensor.
    strides: *const i64,
    byte_offset: u64,
}

/// DLPack's unversioned managed tensor (`DLManagedTensor`), what
/// `__dlpack__()` without arguments returns in a capsule named `dltensor`.
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// `kDLCPU` and `kDLCUDAHost` (pinned host memory): memory this process
/// can write.
const HOST_DEVICES: [i32; 2] = [1, 3];

/// An element type the extension reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    I32,
    U32,
    F16,
    Bf16,
    F32,
    F64,
}

impl Elem {
    fn of(t: DlDataType) -> Option<Elem> {
        if t.lanes != 1 {
            return None;
        }
        Some(match (t.code, t.bits) {
            (0, 32) => Elem::I32,
            (1, 32) => Elem::U32,
            (2, 16) => Elem::F16,
            (4, 16) => Elem::Bf16,
            (2, 32) => Elem::F32,
            (2, 64) => Elem::F64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Elem::F16 | Elem::Bf16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::F64 => 8,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Elem::I32 => "int32",
            Elem::U32 => "uint32",
            Elem::F16 => "float16",
            Elem::Bf16 => "bfloat16",
            Elem::F32 => "float32",
            Elem::F64 => "float64",
        }
    }
}

/// A 1-D or 2-D host array seen through DLPack. A 1-D array is one row.
pub(crate) struct View<'py> {
    /// Keeps the producer's memory alive while rows of it are in use.
    _capsule: Bound<'py, PyAny>,
    /// The first element. Invariant: aligned for `elem`; every row
    /// `base + i * row_stride .. + cols` (in elements, `i < rows`) lies in
    /// the tensor's memory.
    base: *mut u8,
    elem: Elem,
    rows: usize,
    cols: usize,
    /// Elements from one row to the next; rows do not overlap
    /// (`row_stride >= cols` when there are two rows or more).
    row_stride: usize,
}

impl<'py> View<'py> {
    /// The array `obj` through its `__dlpack__`; `what` names it in errors.
    ///
    /// # Errors
    /// `TypeError` for an object without DLPack; `ValueError` for one that
    /// refuses to export (read-only numpy arrays, tensors that require
    /// grad), lives on a device, has more than two dimensions or
    /// overlapping or non-contiguous rows.
    pub(crate) fn new(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<View<'py>> {
        let py = obj.py();
        let Ok(export) = obj.getattr(intern!(py, "__dlpack__")) else {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a numpy array or a CPU torch tensor (an object with __dlpack__), not {}",
                type_name(obj)
            )));
        };
        let capsule = export.call0().map_err(|e| {
            PyValueError::new_err(format!("{what} cannot be written through DLPack: {e}"))
        })?;
        let ptr = {
            let c = capsule.cast::<PyCapsule>().map_err(|_| {
                PyTypeError::new_err(format!("{what}.__dlpack__() did not return a capsule"))
            })?;
            c.pointer_checked(Some(c"dltensor"))
                .map_err(|_| {
                    PyValueError::new_err(format!(
                        "{what}.__dlpack__() returned a capsule that is not an unconsumed `dltensor`"
                    ))
                })?
                .cast::<DlManagedTensor>()
        };
        // SAFETY: a capsule named `dltensor` holds a valid `DLManagedTensor`
        // (the DLPack Python specification) that stays valid while the
        // capsule lives; `capsule` is alive for this whole function and is
        // moved into the view afterwards.
        let t = unsafe { &ptr.as_ref().dl_tensor };
        if !HOST_DEVICES.contains(&t.device.device_type) {
            return Err(PyValueError::new_err(format!(
                "{what} lives on a device (DLPack device type {}); pass a CPU array or tensor",
                t.device.device_type
            )));
        }
        let Some(elem) = Elem::of(t.dtype) else {
            return Err(PyValueError::new_err(format!(
                "{what} has an unsupported dtype (DLPack code {}, {} bits, {} lanes)",
                t.dtype.code, t.dtype.bits, t.dtype.lanes
            )));
        };
        let ndim = usize::try_from(t.ndim).unwrap_or(0);
        if !(1..=2).contains(&ndim) {
            return Err(PyValueError::new_err(format!(
                "{what} must have 1 or 2 dimensions, not {}",
                t.ndim
            )));
        }
        // SAFETY: DLPack requires `shape` to point at `ndim` sizes, and
        // `strides` (when not null) at `ndim` strides; `ndim` is 1 or 2.
        let (shape, strides) = unsafe {
            let shape = std::slice::from_raw_parts(t.shape, ndim);
            let strides =
                (!t.strides.is_null()).then(|| std::slice::from_raw_parts(t.strides, ndim));
            (shape, strides)
        };
        let dims: Vec<usize> = shape.iter().map(|&d| usize::try_from(d).unwrap_or(0)).collect();
        let (rows, cols) = if ndim == 2 { (dims[0], dims[1]) } else { (1, dims[0]) };
        let (row_stride, col_stride) = match strides {
            None => (cols as i64, 1),
            Some(s) if ndim == 2 => (s[0], s[1]),
            Some(s) => (cols as i64, s[0]),
        };
        if cols > 1 && col_stride != 1 {
            return Err(PyValueError::new_err(format!(
                "{what} is not contiguous along its last dimension (stride {col_stride}); pass a contiguous array"
            )));
        }
        let row_stride = usize::try_from(row_stride).unwrap_or(0);
        if rows > 1 && row_stride < cols {
            return Err(PyValueError::new_err(format!(
                "{what} has overlapping or reversed rows (row stride {row_stride}, {cols} columns)"
            )));
        }
        let base = if rows == 0 || cols == 0 {
            // No row is ever read; a dangling, well-aligned pointer keeps
            // the empty slices valid even when the producer's is null.
            std::ptr::NonNull::<u64>::dangling().as_ptr().cast::<u8>()
        } else {
            (t.data as *mut u8).wrapping_add(t.byte_offset as usize)
        };
        if !(base as usize).is_multiple_of(elem.size()) {
            return Err(PyValueError::new_err(format!(
                "{what}'s data is not aligned for {}",
                elem.name()
            )));
        }
        Ok(View { _capsule: capsule, base, elem, rows, cols, row_stride })
    }

    /// The number of rows (1 for a 1-D array).
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The number of elements per row.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    /// The element type.
    pub(crate) fn elem(&self) -> Elem {
        self.elem
    }

    /// Rows `indices` as disjoint mutable slices of `T`.
    ///
    /// # Errors
    /// `ValueError` for an index out of range or given twice.
    ///
    /// # Panics
    /// When `T`'s size is not the element size (a bug of the caller,
    /// which must match on [`elem`](View::elem) first).
    pub(crate) fn rows_mut<T: Plain>(&mut self, indices: &[usize]) -> PyResult<Vec<&mut [T]>> {
        assert_eq!(size_of::<T>(), self.elem.size(), "row type of the wrong size");
        let mut seen = vec![false; self.rows];
        for &i in indices {
            match seen.get_mut(i) {
                None => {
                    return Err(PyValueError::new_err(format!(
                        "row {i} is out of range: the array has {} rows",
                        self.rows
                    )));
                }
                Some(true) => {
                    return Err(PyValueError::new_err(format!("row {i} is given twice")));
                }
                Some(s) => *s = true,
            }
        }
        let (base, stride, cols) = (self.base.cast::<T>(), self.row_stride, self.cols);
        Ok(indices
            .iter()
            .map(|&i| {
                // SAFETY: row `i < rows` lies in the tensor's memory and is
                // aligned for `T` (the view's invariant, `T` of the element
                // size); the indices are distinct and rows do not overlap,
                // so the slices are disjoint; they borrow `self` mutably,
                // so the capsule outlives them and no other slice of this
                // view exists meanwhile.
                unsafe { std::slice::from_raw_parts_mut(base.add(i * stride), cols) }
            })
            .collect())
    }

    /// Every row as a shared slice of `T`.
    ///
    /// # Panics
    /// As [`rows_mut`](View::rows_mut).
    pub(crate) fn all_rows<T: Plain>(&self) -> Vec<&[T]> {
        assert_eq!(size_of::<T>(), self.elem.size(), "row type of the wrong size");
        let (base, stride, cols) = (self.base.cast::<T>(), self.row_stride, self.cols);
        (0..self.rows)
            .map(|i| {
                // SAFETY: as in `rows_mut`, and the slices are shared
                // borrows of `self`, so no mutable slice of this view
                // exists meanwhile.
                unsafe { std::slice::from_raw_parts(base.add(i * stride).cast_const(), cols) }
            })
            .collect()
    }
}

/// Element types whose every bit pattern is a value (so any memory of the
/// right size and alignment can be read as a slice of them).
pub(crate) trait Plain: Copy + Send + Sync + 'static {}
impl Plain for u16 {}
impl Plain for u32 {}
impl Plain for f32 {}
impl Plain for f64 {}

/// The Python type name of `obj`, for error messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string())
}
