package explain

// Fixed is the rule of a fixed-P test, the paper's: the test uses all N
// draws and
//
//	p = (1 + H_N) / (1 + N),
//
// the empirical p-value of Ojala and Garriga, whose floor is 1/(P + 1):
// 1/51 at the paper's P = 50. A test with N = 0 draws (the ordering of a
// window of one timestep) has p = 1. Fixed is the zero rule: a nil Stop
// means Fixed.
type Fixed struct{}

func (Fixed) validate() error { return nil }
func (Fixed) start() stopper  { return Fixed{} }

// batch asks for every draw left.
func (Fixed) batch(t *tally) int              { return t.max - t.issued }
func (Fixed) add(*tally) bool                 { return false }
func (Fixed) pValue(t *tally, _ bool) float64 { return t.pValue() }

// fixedTests is FixedTests: every test, window-search probes and checks
// included, makes exactly TIME.Permutations draws, DefaultPermutations
// (the paper's P = 50) by default.
type fixedTests struct{}

func (fixedTests) permutations() int              { return DefaultPermutations }
func (fixedTests) capOf(p float64) float64        { return p }
func (fixedTests) familyStop(int, float64) Stop   { return Fixed{} }
func (fixedTests) pairStop(int, float64) Stop     { return Fixed{} }
func (fixedTests) orderingStop(int, float64) Stop { return Fixed{} }
func (fixedTests) powerHits() (int, int)          { return PowerHits, OrderingHits }
func (fixedTests) probeStop(float64) Stop         { return Fixed{} }
func (fixedTests) checkStop(float64) Stop         { return Fixed{} }
