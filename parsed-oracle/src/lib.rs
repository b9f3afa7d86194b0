//! Differential tests only: see tests/.
