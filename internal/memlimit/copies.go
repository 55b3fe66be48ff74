package memlimit

// Working copies. An explainer whose workers each perturb a private copy
// of the data (explain's draws, baselines.Occlusion's windows) copies the
// whole data per worker only when every worker's copy fits a budget, a
// quarter of the memory limit by default; otherwise each worker holds one
// chunk of instances at a time and predicts the data chunk by chunk.

// ChunkValues is the size of a chunk in values (16 MiB of float64): data
// of at most ChunkValues values is always copied whole, and a chunk of
// larger data holds whole instances of at most ChunkValues values.
const ChunkValues = 1 << 21

// CopyCap caps the default budget of working copies (256 MiB), so that an
// explanation with the default settings peaks near the data's own size
// plus this cap, whatever the machine's memory: the copies save model
// calls (one per draw instead of one per chunk) only, never change a
// result, and the model and the data need the memory more.
const CopyCap = 256 << 20

// CopyBudget returns the default bytes the workers' working copies of the
// data may use: the smaller of CopyCap and a quarter of Default's limit.
func CopyBudget() int64 {
	l, _ := Default()
	return min(l/4, CopyCap)
}

// ChunkRows returns the number of instances per model call of workers that
// each hold a working copy of m instances of width values each, under
// budget bytes for all copies (0 or less: CopyBudget): m when the data has
// at most chunkValues values or every worker's copy fits the budget, else
// as many whole instances as a chunk holds (at least one): chunkValues
// values, or fewer when the workers' chunks would not fit the budget, so
// that the copies stay within the budget for any number of workers unless
// one instance per worker exceeds it. chunkValues is normally ChunkValues
// (tests lower it to force chunking).
func ChunkRows(m, width, workers int, budget int64, chunkValues int) int {
	if budget <= 0 {
		budget = CopyBudget()
	}
	vals := m * width
	if vals <= chunkValues || float64(vals)*8*float64(max(1, workers)) <= float64(budget) {
		return m
	}
	chunk := min(int64(chunkValues), budget/8/int64(max(1, workers)))
	return max(1, int(chunk)/width)
}
