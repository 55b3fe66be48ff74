package results

// This file holds the paper's published tables, reference data: the only
// method names of package results.

import "math"

// PaperRow is one row of a table published in the TIME paper: mean power and
// FDR over models, the median runtime, and the number of models the row was
// averaged over. A value the paper does not give is NaN (Models 0).
type PaperRow struct {
	Method                     string
	FeaturePower, FeatureFDR   float64
	TimestepPower, TimestepFDR float64
	RuntimeSeconds             float64
	Models                     int
}

// PaperTable describes one of the paper's method-comparison tables. A
// suite whose settings reproduce it says so by its ID (report.Suite).
type PaperTable struct {
	// ID names the output files, e.g. "table1".
	ID string
	// Title is the caption, e.g. "Table 1".
	Title string
	// Setup describes the paper's setting.
	Setup string
	// Rows are in the paper's order; they list the methods of the table.
	Rows []PaperRow
}

// Row returns the paper's row for method.
func (t *PaperTable) Row(method string) (PaperRow, bool) {
	for _, r := range t.Rows {
		if r.Method == method {
			return r, true
		}
	}
	return PaperRow{}, false
}

// MethodOrder is the order in which methods are listed: the order of the
// paper's Table S1, which has all eight of its methods. Methods not listed
// (methods the paper never ran) come after, in lexical order.
var MethodOrder = []string{"TIME", "TIME-n", "LIME", "SAGE", "SAGE-m", "SAGE-z", "PERM", "PERM-f"}

// The values below are reference data, not results: they are the numbers
// published in A. Sood and M. Craven, "Feature importance explanations for
// temporal black-box models" (arXiv:2102.11934), Table 1, Table S1 and
// Table S2. Model counts are from the same tables' text (100 models; in
// Table S2 SAGE was averaged over 86 models and SAGE-m over 99).
var (
	// paperTable1 is the paper's Table 1 (10 features, 20 timesteps, 1000
	// instances, 5 relevant features, 100 classification models).
	paperTable1 = []PaperRow{
		{"TIME", 0.930, 0.037, 0.923, 0.054, 371, 100},
		{"TIME-n", 0.922, 0.018, 0.915, 0.021, 371, 100},
		{"LIME", 0.710, 0.290, 0.692, 0.308, 682, 100},
		{"SAGE", 0.806, 0.194, 0.786, 0.214, 15318, 100},
		{"SAGE-m", 0.758, 0.242, 0.731, 0.269, 124, 100},
		{"PERM", 0.836, 0.164, 0.818, 0.182, 1478, 100},
	}
	// paperTableS1Extra are the two rows Table S1 adds to Table 1.
	paperTableS1Extra = []PaperRow{
		{"SAGE-z", 0.656, 0.344, 0.648, 0.352, 44, 100},
		{"PERM-f", 0.326, 0.024, 0.312, 0.008, 1478, 100},
	}
	// paperTableS2 is the paper's Table S2 (30 features, 10 relevant). The
	// paper omits PERM-f because it found nothing; its row is NaN.
	paperTableS2 = []PaperRow{
		{"TIME", 0.914, 0.033, 0.909, 0.037, 2810, 100},
		{"TIME-n", 0.909, 0.015, 0.904, 0.011, 2810, 100},
		{"LIME", 0.728, 0.272, 0.680, 0.320, 1704, 100},
		{"SAGE", 0.799, 0.201, 0.743, 0.257, 177038, 86},
		{"SAGE-m", 0.692, 0.308, 0.642, 0.358, 2463, 99},
		{"SAGE-z", 0.609, 0.391, 0.583, 0.417, 667, 100},
		{"PERM", 0.830, 0.170, 0.792, 0.208, 11365, 100},
		{"PERM-f", math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0},
	}
)

// PaperTables returns the paper's comparison tables in the order Table 1,
// Table S1, Table S2. Table S1 has Table 1's rows plus SAGE-z and PERM-f, in
// MethodOrder. The result is a fresh copy.
func PaperTables() []PaperTable {
	s1 := make([]PaperRow, 0, len(paperTable1)+len(paperTableS1Extra))
	for _, m := range MethodOrder {
		for _, r := range append(paperTable1[:len(paperTable1):len(paperTable1)], paperTableS1Extra...) {
			if r.Method == m {
				s1 = append(s1, r)
			}
		}
	}
	const setup1 = "10 features (5 relevant), 20 timesteps, 1000 instances, 100 classification models"
	return []PaperTable{
		{ID: "table1", Title: "Table 1", Setup: setup1, Rows: append([]PaperRow(nil), paperTable1...)},
		{ID: "table-s1", Title: "Table S1", Setup: setup1, Rows: s1},
		{ID: "table-s2", Title: "Table S2",
			Setup: "30 features (10 relevant), 20 timesteps, 1000 instances, 100 classification models",
			Rows:  append([]PaperRow(nil), paperTableS2...)},
	}
}

// IsPaperMethod reports whether method has a row in one of the paper's
// tables (PaperTables). Reports give every other method, a method the
// paper never ran, a row of its own in every comparison table.
func IsPaperMethod(method string) bool {
	for _, pt := range PaperTables() {
		if _, ok := pt.Row(method); ok {
			return true
		}
	}
	return false
}

// HeatmapMethods are the methods the paper's Figure 3 draws beside the
// ground truth. Reports draw them, when present, followed by every method
// the paper never ran (IsPaperMethod).
var HeatmapMethods = []string{"TIME", "SAGE"}
