// Package dataio reads and writes the data files tempora exchanges with
// other tools: tensors and vectors as NumPy .npy files (float64 or float32,
// any integer or boolean type, C or Fortran order; npy.go) and as
// long-format CSV (csv.go), feature-name lists, one per line or a JSON
// array (names.go), and whole data sets: data, targets, feature names and
// an observation mask read together and checked together, including data
// with missing values (NaN) and the alignment of sequences of different
// lengths (ReadFiles, dataset.go), and the targets of models with several
// outputs per instance: class labels, or K targets per instance (.npy of
// shape (M, K), wide or long CSV) of which some may be missing
// (outputs.go). Which reader reads a file is decided in one place, the
// reader table of readers.go, from the file's extension.
//
// Every reader validates what it reads (shape, finiteness, duplicates and
// missing cells) and returns an error naming the file; an error about the
// data, targets, names or mask wraps a *tempora.DataError, which says what
// is wrong and where (instance, feature, timestep) for programs that map it
// to their own names. Every writer replaces its file atomically, so an
// interrupted write never leaves a partial file.
package dataio
