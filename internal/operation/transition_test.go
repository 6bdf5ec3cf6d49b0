package operation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func intp(v int) *int { return &v }

func held(edit func(*State)) *State {
	s := &State{ID: "op-1", Key: "uid-1/3/op-1", Generation: 3, StartedAt: t0, Polls: 2,
		PollAfter: Duration(5 * time.Second), Deadline: t0.Add(time.Hour), Message: "creating", Progress: intp(20)}
	if edit != nil {
		edit(s)
	}
	return s
}

func TestPending(t *testing.T) {
	now := t0.Add(90*time.Second + 400*time.Millisecond)
	start := t0.Add(90 * time.Second) // times are kept to the second
	tests := []struct {
		name       string
		held       *State
		answer     Answer
		sent       int64
		want       State
		wantChange Change
	}{
		{"first pending answer starts an operation for the generation sent",
			nil, Answer{ID: "op-1", PollAfter: 30 * time.Second, Deadline: 10 * time.Minute, Message: "creating", Progress: intp(0)}, 3,
			State{ID: "op-1", Key: "uid-1/3/op-1", Generation: 3, StartedAt: start, PollAfter: Duration(30 * time.Second),
				Deadline: start.Add(10 * time.Minute), Message: "creating", Progress: intp(0)}, Started},
		{"no pollAfter polls after the default, no deadline never times out",
			nil, Answer{ID: "op-1"}, 3,
			State{ID: "op-1", Key: "uid-1/3/op-1", Generation: 3, StartedAt: start, PollAfter: Duration(DefaultPollAfter)}, Started},
		{"a pollAfter under a second is raised to one",
			nil, Answer{ID: "op-1", PollAfter: 10 * time.Millisecond}, 3,
			State{ID: "op-1", Key: "uid-1/3/op-1", Generation: 3, StartedAt: start, PollAfter: Duration(MinPollAfter)}, Started},
		{"the same id continues: start, generation and key stay, polls grow",
			held(nil), Answer{ID: "op-1", PollAfter: 5 * time.Second, Deadline: time.Hour, Message: "copying", Progress: intp(60)}, 3,
			*held(func(s *State) { s.Polls, s.Message, s.Progress = 3, "copying", intp(60) }), Continued},
		{"the same id on a superseded poll keeps the older generation",
			held(nil), Answer{ID: "op-1", Deadline: time.Hour}, 4,
			*held(func(s *State) { s.Polls, s.Message, s.Progress, s.PollAfter = 3, "", nil, Duration(DefaultPollAfter) }), Continued},
		{"a later answer may extend the deadline, counted from the start",
			held(nil), Answer{ID: "op-1", PollAfter: 5 * time.Second, Deadline: 2 * time.Hour}, 3,
			*held(func(s *State) { s.Polls, s.Message, s.Progress, s.Deadline = 3, "", nil, t0.Add(2*time.Hour) }), Continued},
		{"or drop it",
			held(nil), Answer{ID: "op-1", PollAfter: 5 * time.Second}, 3,
			*held(func(s *State) { s.Polls, s.Message, s.Progress, s.Deadline = 3, "", nil, time.Time{} }), Continued},
		{"another id replaces the held operation, for the generation sent",
			held(nil), Answer{ID: "op-2", PollAfter: 5 * time.Second}, 4,
			State{ID: "op-2", Key: "uid-1/4/op-2", Generation: 4, StartedAt: start, PollAfter: Duration(5 * time.Second)}, Replaced},
		{"after a time-out even the same id starts afresh",
			held(func(s *State) { s.TimedOut = true }), Answer{ID: "op-1", Deadline: time.Minute}, 3,
			State{ID: "op-1", Key: "uid-1/3/op-1", Generation: 3, StartedAt: start, PollAfter: Duration(DefaultPollAfter),
				Deadline: start.Add(time.Minute)}, Started},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before State
			if tt.held != nil {
				before = *tt.held
			}
			got, change := Pending(tt.held, tt.answer, "uid-1", tt.sent, now)
			if change != tt.wantChange {
				t.Errorf("change = %s, want %s", change, tt.wantChange)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("state (-want +got):\n%s", d)
			}
			if tt.held != nil {
				if d := cmp.Diff(before, *tt.held); d != "" {
					t.Errorf("held was modified (-before +after):\n%s", d)
				}
			}
		})
	}
}

func TestPendingDoesNotShareTheAnswersProgress(t *testing.T) {
	p := intp(10)
	s, _ := Pending(nil, Answer{ID: "x", Progress: p}, "u", 1, t0)
	*p = 99
	if *s.Progress != 10 {
		t.Errorf("progress = %d, want 10", *s.Progress)
	}
}

func TestExpiredAndTimeOut(t *testing.T) {
	tests := []struct {
		name string
		s    *State
		now  time.Time
		want bool
	}{
		{"before the deadline", held(nil), t0.Add(59 * time.Minute), false},
		{"at the deadline", held(nil), t0.Add(time.Hour), true},
		{"after the deadline", held(nil), t0.Add(2 * time.Hour), true},
		{"no deadline never expires", held(func(s *State) { s.Deadline = time.Time{} }), t0.Add(1000 * time.Hour), false},
		{"a timed-out operation is no longer held", held(func(s *State) { s.TimedOut = true }), t0.Add(2 * time.Hour), false},
		{"no operation", nil, t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Expired(tt.now); got != tt.want {
				t.Errorf("Expired = %v, want %v", got, tt.want)
			}
		})
	}

	s := held(nil)
	next, msg := TimeOut(*s, t0.Add(time.Hour+3*time.Second))
	want := *held(func(s *State) { s.TimedOut = true })
	if d := cmp.Diff(want, next); d != "" {
		t.Errorf("TimeOut state (-want +got):\n%s", d)
	}
	if next.Held() {
		t.Error("a timed-out operation is still held")
	}
	if wantMsg := `operation "op-1" timed out: no final answer 1h0m3s after it started (deadline 1h0m0s), after 2 polls`; msg != wantMsg {
		t.Errorf("message = %q, want %q", msg, wantMsg)
	}
	if s.TimedOut {
		t.Error("TimeOut modified its argument")
	}
	if p := next.Prepared(3); !p.TimedOut {
		t.Error("the request after a time-out does not say timedOut")
	}
}

func TestFinish(t *testing.T) {
	tests := []struct {
		name          string
		held          *State
		sent, current int64
		want          Final
	}{
		{"no operation, current generation", nil, 3, 3, Final{AdvanceObserved: true}},
		{"no operation, the spec changed during the call", nil, 3, 4, Final{}},
		{"the operation of the current generation finished", held(nil), 3, 3, Final{Clear: true, AdvanceObserved: true}},
		{"a superseded operation finished: observedGeneration waits, call again", held(nil), 4, 4, Final{Clear: true, CallAgain: true}},
		{"a timed-out operation's next answer is an ordinary one", held(func(s *State) { s.TimedOut = true }), 4, 4, Final{Clear: true, AdvanceObserved: true}},
		{"a timed-out operation, the spec changed during the call", held(func(s *State) { s.TimedOut = true }), 4, 5, Final{Clear: true, CallAgain: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Finish(tt.held, tt.sent, tt.current)); d != "" {
				t.Errorf("Finish (-want +got):\n%s", d)
			}
		})
	}
}

func TestNextPoll(t *testing.T) {
	tests := []struct {
		name string
		s    *State
		now  time.Time
		want time.Duration
	}{
		{"pollAfter", held(nil), t0, 5 * time.Second},
		{"the deadline comes first", held(nil), t0.Add(time.Hour - 2*time.Second), 2 * time.Second},
		{"the deadline has passed", held(nil), t0.Add(2 * time.Hour), 0},
		{"no deadline", held(func(s *State) { s.Deadline = time.Time{}; s.PollAfter = Duration(time.Hour) }), t0.Add(2 * time.Hour), time.Hour},
		{"a persisted pollAfter of 0 is the default", held(func(s *State) { s.PollAfter = 0 }), t0, DefaultPollAfter},
		{"a hand-edited pollAfter under a second is one", held(func(s *State) { s.PollAfter = Duration(time.Millisecond) }), t0, MinPollAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.NextPoll(tt.now); got != tt.want {
				t.Errorf("NextPoll = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPrepared(t *testing.T) {
	tests := []struct {
		name    string
		s       *State
		current int64
		want    *Prepared
	}{
		{"no operation, nothing to send", nil, 3, nil},
		{"held for the current generation", held(nil), 3,
			&Prepared{ID: "op-1", Key: "uid-1/3/op-1", StartedAt: t0, Polls: 2, Generation: 3}},
		{"the spec moved on: superseded", held(nil), 4,
			&Prepared{ID: "op-1", Key: "uid-1/3/op-1", StartedAt: t0, Polls: 2, Superseded: true, Generation: 3}},
		{"timed out", held(func(s *State) { s.TimedOut = true }), 3,
			&Prepared{ID: "op-1", Key: "uid-1/3/op-1", StartedAt: t0, Polls: 2, TimedOut: true, Generation: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.s.Prepared(tt.current)); d != "" {
				t.Errorf("Prepared (-want +got):\n%s", d)
			}
		})
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		uid  string
		gen  int64
		id   string
		want string
	}{
		{"0b5e7f3c-0000-4000-8000-000000000001", 1, "", "0b5e7f3c-0000-4000-8000-000000000001/1"},
		{"0b5e7f3c-0000-4000-8000-000000000001", 7, "db-create-42", "0b5e7f3c-0000-4000-8000-000000000001/7/db-create-42"},
	}
	for _, tt := range tests {
		if got := Key(tt.uid, tt.gen, tt.id); got != tt.want {
			t.Errorf("Key(%q, %d, %q) = %q, want %q", tt.uid, tt.gen, tt.id, got, tt.want)
		}
	}
}

func TestBoundPollAfter(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: DefaultPollAfter, -time.Second: MinPollAfter, 999 * time.Millisecond: MinPollAfter,
		time.Second: time.Second, 45 * time.Second: 45 * time.Second,
	} {
		if got := BoundPollAfter(in); got != want {
			t.Errorf("BoundPollAfter(%s) = %s, want %s", in, got, want)
		}
	}
}
