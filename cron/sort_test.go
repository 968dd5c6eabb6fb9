package cron

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/rpc"
)

// meta.sort orders find_page of schedules and runs on every database: allowed columns by JSON
// name in either shape, direction case-insensitive, nulls first or last, unknown columns ignored,
// the default order breaking ties.
func TestFindPageSort(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, h *harness, ctx context.Context) {
		h.create(t, Spec{Name: "a", JobName: "ok", Trigger: every(5 * time.Minute)})
		h.create(t, Spec{Name: "b", JobName: "ok", Trigger: every(time.Minute)})
		h.create(t, Spec{Name: "c", JobName: "ok", Trigger: Trigger{Kind: KindOnce, At: t0.Add(2 * time.Minute)}})
		h.clock.Advance(2 * time.Minute)
		h.claim(t, true) // c is spent: its cursor is null; b ran at +1m and +2m
		names := func(meta string) []string {
			t.Helper()
			page, err := h.svc.findSchedules(ctx, rpc.Call{Meta: json.RawMessage(meta)}, ScheduleSearch{})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range page.Items {
				out = append(out, s.Name)
			}
			return out
		}
		for _, tt := range []struct{ meta, want string }{
			{`{}`, "a b c"},
			{`{"sort":[{"column":"name","direction":"DESC"}]}`, "c b a"},
			{`{"sort":[{"column":"nextFireAtUnixMs","direction":"asc","nullsOrder":2}]}`, "b a c"},
			{`{"sort":[{"column":"nextFireAt","direction":"desc","nullsOrder":1}]}`, "c a b"},
			{`{"sort":[{"column":"params; DROP TABLE crn_run","direction":"desc"}]}`, "a b c"},
			{`{"sort":[{"column":"isEnabled"},{"column":"name","direction":"desc"}]}`, "c b a"},
		} {
			if diff := cmp.Diff(tt.want, strings.Join(names(tt.meta), " ")); diff != "" {
				t.Errorf("meta %s (-want +got):\n%s", tt.meta, diff)
			}
		}
		runs, err := h.svc.findRuns(ctx, rpc.Call{Meta: json.RawMessage(`{"sort":[{"column":"scheduledAt","direction":"asc"},{"column":"scheduleName"}]}`)}, RunSearch{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs.Items {
			got = append(got, r.ScheduleName+"@"+r.ScheduledAt[14:16])
		}
		if diff := cmp.Diff("b@01 b@02 c@02", strings.Join(got, " ")); diff != "" {
			t.Errorf("runs by scheduledAt (-want +got):\n%s", diff)
		}
	})
}
