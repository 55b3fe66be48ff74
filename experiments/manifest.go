package experiments

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Manifest is the description of a run stored in Out/manifest.json, so that
// runs can be resumed and shards merged and checked.
type Manifest struct {
	Format  string   `json:"format"`
	Suite   string   `json:"suite"`
	Grid    string   `json:"grid,omitempty"`
	Quick   bool     `json:"quick"`
	Seed    uint64   `json:"seed"`
	Models  int      `json:"models"`
	Methods []string `json:"methods"`
	Shard   Shard    `json:"shard"`
}

// ManifestFormat is the value of a manifest's "format" field.
const ManifestFormat = "tempora-manifest/1"

func (p *plan) manifest(o *Options) *Manifest {
	return &Manifest{Format: ManifestFormat, Suite: p.suite.Name, Grid: o.Grid, Quick: o.Quick,
		Seed: p.seed, Models: p.models, Methods: p.methods, Shard: o.Shard}
}

// sameProblems reports whether two manifests describe runs whose records
// can share a directory: the same suite, grid, scale and seed.
func (m *Manifest) sameProblems(n *Manifest) bool {
	return m.Suite == n.Suite && m.Grid == n.Grid && m.Quick == n.Quick && m.Seed == n.Seed
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, "manifest.json"), safefile.ManifestLimit, "a manifest")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("experiments: %s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("experiments: %s: format %q, want %q", filepath.Join(dir, "manifest.json"), m.Format, ManifestFormat)
	}
	if err := m.check(filepath.Join(dir, "manifest.json")); err != nil {
		return nil, err
	}
	return &m, nil
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, "manifest.json"), append(b, '\n'))
}
