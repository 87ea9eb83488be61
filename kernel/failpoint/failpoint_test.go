package failpoint

import (
	"context"
	"errors"
	"testing"
)

// A nil Set is disabled: the kernel's only cost is the nil check.
func TestNilSetIsDisabled(t *testing.T) {
	var s *Set
	for _, n := range All() {
		if err := s.Hit(context.Background(), n); err != nil {
			t.Fatalf("nil set fired %s: %v", n, err)
		}
	}
}

func TestArmedActions(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		action  Action
		wantErr error
		crashes bool
	}{
		{"error", Action{Kind: ReturnError, Err: boom}, boom, false},
		{"generic error", Action{Kind: ReturnError}, ErrInjected, false},
		{"crash", Action{Kind: Crash}, ErrCrashed, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			crashed := false
			s.OnCrash(func() { crashed = true })
			if err := s.Hit(ctx, BeforePublish); err != nil {
				t.Fatalf("unarmed hit fired: %v", err)
			}
			s.Arm(BeforePublish, tc.action)
			err := s.Hit(ctx, BeforePublish)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if crashed != tc.crashes {
				t.Fatalf("crash hook called=%v, want %v", crashed, tc.crashes)
			}
			if err := s.Hit(ctx, AfterTableCommit); err != nil {
				t.Fatalf("other site fired: %v", err)
			}
			if got := s.Hits(BeforePublish); got != 2 {
				t.Fatalf("hits = %d, want 2", got)
			}
		})
	}
}

func TestTimesBoundsFiring(t *testing.T) {
	s := NewSet()
	s.Arm(AfterTableCommit, Action{Kind: ReturnError, Times: 2})
	fired := 0
	for i := 0; i < 5; i++ {
		if s.Hit(context.Background(), AfterTableCommit) != nil {
			fired++
		}
	}
	if fired != 2 {
		t.Fatalf("fired %d times, want 2", fired)
	}
}

func TestDeciderAndArmPrecedence(t *testing.T) {
	s := NewSet()
	s.SetDecider(func(n Name) (Action, bool) { return Action{Kind: ReturnError}, n == MigrationBeforeStamp })
	if err := s.Hit(context.Background(), MigrationBeforeStamp); !errors.Is(err, ErrInjected) {
		t.Fatalf("decider did not fire: %v", err)
	}
	if err := s.Hit(context.Background(), BeforePublish); err != nil {
		t.Fatalf("decider fired on a site it declined: %v", err)
	}
	rv := NewRendezvous()
	rv.Release()
	s.Arm(MigrationBeforeStamp, Action{Kind: Pause, Rendezvous: rv})
	if err := s.Hit(context.Background(), MigrationBeforeStamp); err != nil {
		t.Fatalf("explicit arm did not take precedence: %v", err)
	}
}

// A paused hit parks until released; the test learns it was reached through
// the rendezvous, not through a sleep.
func TestPauseRendezvous(t *testing.T) {
	s := NewSet()
	rv := NewRendezvous()
	s.Arm(BeforeRollForwardPublish, Action{Kind: Pause, Rendezvous: rv})
	done := make(chan error, 1)
	go func() { done <- s.Hit(context.Background(), BeforeRollForwardPublish) }()
	<-rv.Reached()
	select {
	case err := <-done:
		t.Fatalf("hit returned before release: %v", err)
	default:
	}
	rv.Release()
	if err := <-done; err != nil {
		t.Fatalf("released hit: %v", err)
	}
}

func TestPauseHonoursContext(t *testing.T) {
	s := NewSet()
	rv := NewRendezvous()
	s.Arm(BeforePublish, Action{Kind: Pause, Rendezvous: rv})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Hit(ctx, BeforePublish); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestArmRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    Name
		a    Action
	}{
		{"unknown name", Name("no.such.site"), Action{Kind: ReturnError}},
		{"pause without rendezvous", BeforePublish, Action{Kind: Pause}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Arm did not panic")
				}
			}()
			NewSet().Arm(tc.n, tc.a)
		})
	}
}
