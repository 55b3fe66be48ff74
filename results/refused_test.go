package results

import (
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// TestRefusedRecords checks that refused records are left out of their
// group's statistics and shown in the suite table as refused with the
// method's message, not as a row of zeros.
func TestRefusedRecords(t *testing.T) {
	var recs []*record.Record
	ps := []record.Param{{Key: "missing-rate", Value: "0.2"}}
	for k := range 2 {
		recs = append(recs,
			&record.Record{Format: record.Format, Suite: "irregular", Params: ps, Model: k, Seed: 1, Method: "TIME",
				Metrics: []record.Metric{{Name: "feature-power", Value: 1}}, Warnings: []string{}},
			&record.Record{Format: record.Format, Suite: "irregular", Params: ps, Model: k, Seed: 1, Method: "LIME",
				Metrics: []record.Metric{}, Incomplete: true, Warnings: []string{record.RefusedWarning + "LIME needs complete data | really"}})
	}
	groups, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	var lime *Group
	for i := range groups {
		if groups[i].Method == "LIME" {
			lime = &groups[i]
		}
	}
	if lime == nil || len(lime.Models) != 0 || len(lime.Refused) != 2 || lime.Refusal != "LIME needs complete data | really" || len(lime.Metrics) != 0 {
		t.Fatalf("LIME's group: %+v", lime)
	}
	if got, want := modelsCell(lime), `0 (refused by 2: LIME needs complete data \| really)`; got != want {
		t.Errorf("models cell %q, want %q", got, want)
	}
}
