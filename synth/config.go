package synth

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/memlimit"
)

// Defaults applied to zero-valued Config fields. They are the sizes of the
// paper's Table 1 (1000 instances × 10 features × 20 timesteps, half of the
// features relevant).
const (
	DefaultInstances        = 1000
	DefaultFeatures         = 10
	DefaultTimesteps        = 20
	DefaultFractionRelevant = 0.5
)

// maxValues bounds M·D·L (2^31 values, 16 GiB of float64), so an absurd
// configuration fails cleanly instead of exhausting memory. It equals the
// largest tensor the .npy reader accepts.
const maxValues = 1 << 31

// Config describes a synthetic problem. The zero value is the Table 1 setting
// of the paper with a noise-free regression model: 1000 instances, 10
// features, 20 timesteps, 5 relevant features, window-dependent sequences,
// β = 0.
type Config struct {
	// Instances is the number of generated instances M; zero means
	// DefaultInstances. At least 2 are needed (the standardisation
	// statistics, the classification threshold and the automatic β are
	// computed on them).
	Instances int `json:"instances"`
	// Features is the number of features D; zero means DefaultFeatures.
	Features int `json:"features"`
	// Timesteps is the sequence length L; zero means DefaultTimesteps. At
	// least 2 are needed, since every window has at least two timesteps.
	Timesteps int `json:"timesteps"`
	// FractionRelevant is the fraction of relevant features, in [0, 1]; zero
	// means DefaultFractionRelevant. The number of relevant features is
	// max(1, round(D·FractionRelevant)) with ties rounded to even, so any
	// fraction below 0.5/D gives one relevant feature.
	FractionRelevant float64 `json:"fraction_relevant"`
	// Task is the kind of model; the zero value is tempora.Regression.
	Task tempora.Task `json:"task"`
	// Noise selects the noise multiplier β of the irrelevant features; the
	// zero value is β = 0 (a noise-free model, the reference simulation's
	// default). The paper's experiments use AutoNoise.
	Noise Noise `json:"noise"`
	// WindowIndependent makes each feature's sequence one stationary process
	// that ignores its window (no separate in-window chain, no resets; a
	// Bernoulli feature keeps one p). The default (false) is the
	// window-dependent data of the paper's experiments.
	WindowIndependent bool `json:"window_independent"`
	// Aggregator, if non-nil, is every feature's aggregator in place of one
	// drawn uniformly from the four kinds (the draw is still made, so the
	// other choices come from the same streams). Max gives worlds whose
	// per-instance truth (Model.InstanceTruth) differs from the global one.
	Aggregator *Aggregator `json:"aggregator,omitempty"`
	// Irregular, if non-nil, makes an irregular world: sequences of
	// different lengths and missing values (NaN), with a model over
	// observed values (irregular.go).
	Irregular *Irregular `json:"irregular,omitempty"`
}

// Noise is the multiplier β applied to the irrelevant features' terms,
// either given explicitly or chosen automatically. The zero value is an
// explicit β = 0.
type Noise struct {
	// Auto chooses β on the generated instances: for regression the β that
	// makes R² of the model against the noise-free targets exactly 0.9; for
	// classification the β on the grid 0.01, 0.02, …, 0.99 whose accuracy
	// against the labels is closest to 0.9 (the smallest on ties). Beta must
	// then be zero.
	Auto bool
	// Beta is the explicit multiplier, finite and non-negative.
	Beta float64
}

// AutoNoise is the automatic noise setting used in the paper's experiments.
var AutoNoise = Noise{Auto: true}

// ParseNoise parses "auto" or a non-negative number such as "0.5".
func ParseNoise(s string) (Noise, error) {
	s = strings.TrimSpace(s)
	if s == "auto" {
		return AutoNoise, nil
	}
	b, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Noise{}, fmt.Errorf("synth: noise %q is neither \"auto\" nor a number", s)
	}
	n := Noise{Beta: b}
	if err := n.validate(); err != nil {
		return Noise{}, err
	}
	return n, nil
}

// String returns "auto" or β formatted as the shortest decimal that parses
// back to it.
func (n Noise) String() string {
	if n.Auto {
		return "auto"
	}
	return strconv.FormatFloat(n.Beta, 'g', -1, 64)
}

// MarshalText implements encoding.TextMarshaler ("auto" or a number).
func (n Noise) MarshalText() ([]byte, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	return []byte(n.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseNoise.
func (n *Noise) UnmarshalText(b []byte) error {
	v, err := ParseNoise(string(b))
	if err != nil {
		return err
	}
	*n = v
	return nil
}

func (n Noise) validate() error {
	if math.IsNaN(n.Beta) || math.IsInf(n.Beta, 0) || n.Beta < 0 {
		return fmt.Errorf("synth: noise multiplier %v, want a finite number ≥ 0", n.Beta)
	}
	if n.Auto && n.Beta != 0 {
		return fmt.Errorf("synth: noise is auto but an explicit multiplier %v is also given", n.Beta)
	}
	return nil
}

// withDefaults returns c with zero-valued fields replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.Instances == 0 {
		c.Instances = DefaultInstances
	}
	if c.Features == 0 {
		c.Features = DefaultFeatures
	}
	if c.Timesteps == 0 {
		c.Timesteps = DefaultTimesteps
	}
	if c.FractionRelevant == 0 {
		c.FractionRelevant = DefaultFractionRelevant
	}
	return c
}

// validate checks a configuration whose defaults have been applied.
func (c Config) validate() error {
	if c.Instances < 2 {
		return fmt.Errorf("synth: %d instances, need at least 2", c.Instances)
	}
	if c.Features < 1 {
		return fmt.Errorf("synth: %d features, need at least 1", c.Features)
	}
	if c.Timesteps < 2 {
		return fmt.Errorf("synth: sequence length %d, need at least 2", c.Timesteps)
	}
	if v := float64(c.Instances) * float64(c.Features) * float64(c.Timesteps); v > maxValues {
		return fmt.Errorf("synth: %d×%d×%d data tensor has more than %d values", c.Instances, c.Features, c.Timesteps, maxValues)
	}
	if math.IsNaN(c.FractionRelevant) || c.FractionRelevant < 0 || c.FractionRelevant > 1 {
		return fmt.Errorf("synth: fraction of relevant features %v outside [0, 1]", c.FractionRelevant)
	}
	if c.Task != tempora.Regression && c.Task != tempora.Classification {
		return fmt.Errorf("synth: unknown task %d", int(c.Task))
	}
	if a := c.Aggregator; a != nil && (*a < 0 || int(*a) >= len(aggregatorNames)) {
		return fmt.Errorf("synth: invalid aggregator %d", int(*a))
	}
	if c.Irregular != nil {
		if err := c.Irregular.validate(c.Timesteps); err != nil {
			return err
		}
	}
	return c.Noise.validate()
}

// Memory returns an estimate, in bytes, of the memory Generate allocates
// for cfg (defaults applied): the M × D × L data tensor of float64 and six
// vectors of M values (targets, the model's relevant and irrelevant parts,
// standardisation and calibration buffers). Saving streams the data.
func Memory(cfg Config) float64 {
	c := cfg.withDefaults()
	m, d, l := float64(c.Instances), float64(c.Features), float64(c.Timesteps)
	return 8 * (m*d*l + 6*m)
}

// CheckMemory returns an error if the estimate of Memory exceeds the
// memory limit (internal/memlimit: GOMEMLIMIT if set, otherwise 3/4 of the
// physical or control-group memory), so that an absurd size fails with a
// one-line error before anything is allocated instead of exhausting memory.
// Generate calls it; a caller can call it before starting work. Sizes below
// 1 are left to Generate's validation.
func CheckMemory(cfg Config) error {
	c := cfg.withDefaults()
	if c.Instances < 1 || c.Features < 1 || c.Timesteps < 1 {
		return nil
	}
	limit, source := memlimit.Default()
	what := fmt.Sprintf("a %d × %d × %d problem", c.Instances, c.Features, c.Timesteps)
	if err := memlimit.Check(what, Memory(c), limit, source); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// NumRelevant returns the number of relevant features of c (after defaults):
// max(1, round(D·FractionRelevant)), rounding half to even as the reference
// does.
func (c Config) NumRelevant() int {
	c = c.withDefaults()
	r := int(math.RoundToEven(float64(c.Features) * c.FractionRelevant))
	return max(1, min(r, c.Features))
}
