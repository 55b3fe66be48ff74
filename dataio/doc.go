// Package dataio reads and writes the data files tempora exchanges with
// other tools: tensors and vectors as NumPy .npy files (float64 or float32,
// any integer or boolean type, C or Fortran order) and as long-format CSV,
// feature-name lists, and whole data sets (data, targets and feature names
// checked together), including data with missing values (NaN), observation
// masks and the alignment of sequences of different lengths (missing.go).
//
// Every reader validates what it reads (shape, finiteness, duplicates and
// missing cells) and returns an error naming the file; every writer replaces
// its file atomically, so an interrupted write never leaves a partial file.
package dataio
