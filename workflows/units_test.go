package workflows

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// TestUnitsCarryTheirState holds the promise of units.go: every field of a
// run and of its units, down to the records they keep, crosses
// continue-as-new, unless it says `carry:"-"`. The test fills every such
// field with a value of its own, continues the task as new (carry, the
// input's JSON as Temporal carries it, restore) and finds each value again
// in the next run. A unit that forgets a field of its state (as waitpoints
// once did: their counter started again, IDs repeated) fails here, naming
// the field.
func TestUnitsCarryTheirState(t *testing.T) {
	r1 := &run{}
	fill(reflect.ValueOf(r1).Elem(), "run")
	r1.bind()
	t1 := &Task{r: r1, agent: &Agent{Name: "agent"}}
	skill := &skillState{State: json.RawMessage(`{"step":3}`), Wait: &parkedWait{Kind: waitWaitpoint, Slot: "ticket", WaitpointID: "w"}}

	raw, err := json.Marshal(runInput{TaskInput: wire.TaskInput{Agent: "agent"}, Continued: r1.carry(t1, skill)})
	if err != nil {
		t.Fatalf("the continued input does not marshal: %v", err)
	}
	var in runInput
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("the continued input does not unmarshal: %v", err)
	}
	r2 := &run{}
	r2.bind()
	r2.restore(in.Continued)

	var lost []string
	compare(reflect.ValueOf(r1).Elem(), reflect.ValueOf(r2).Elem(), "run", &lost)
	for _, f := range lost {
		t.Errorf("%s did not cross continue-as-new: carry and restore it (its unit's carry/restore), or tag it `carry:\"-\"` if it is this run's only", f)
	}
	if r2.parked == nil || *r2.parked != *skill.Wait {
		t.Errorf("the skill's wait %+v came back as %+v", skill.Wait, r2.parked)
	}
}

// TestUnitsCarryTheirStateCatchesAForgottenField: the test above fails when
// a unit does not carry its state: here, the waitpoints' state, as before
// waitpoints were a unit.
func TestUnitsCarryTheirStateCatchesAForgottenField(t *testing.T) {
	r1 := &run{}
	fill(reflect.ValueOf(r1).Elem(), "run")
	r1.bind()
	c := r1.carry(&Task{r: r1}, nil)
	c.Waitpoints = carriedWaitpoints{} // forgotten
	r2 := &run{}
	r2.bind()
	r2.restore(c)
	var lost []string
	compare(reflect.ValueOf(r1).Elem(), reflect.ValueOf(r2).Elem(), "run", &lost)
	if len(lost) == 0 || !strings.Contains(strings.Join(lost, " "), "run.waitpoints.") {
		t.Errorf("forgotten waitpoints reported as %v, want run.waitpoints fields", lost)
	}
}

// carried reports whether a struct field crosses continue-as-new.
func carried(f reflect.StructField) bool { return f.Tag.Get("carry") != "-" }

var sampleTime = time.Date(2026, 11, 27, 9, 30, 0, 123456789, time.UTC)

// samples are the values of the types the walk does not fill field by
// field (A2A's, whose parts hold interfaces), one per type.
func sample(t reflect.Type, path string) (reflect.Value, bool) {
	switch t {
	case reflect.TypeFor[time.Time]():
		return reflect.ValueOf(sampleTime), true
	case reflect.TypeFor[time.Duration]():
		return reflect.ValueOf(5 * time.Second), true
	case reflect.TypeFor[json.RawMessage]():
		return reflect.ValueOf(json.RawMessage(fmt.Sprintf(`{"at":%q}`, path))), true
	case reflect.TypeFor[a2a.TaskState]():
		return reflect.ValueOf(a2a.TaskStateInputRequired), true
	case reflect.TypeFor[*a2a.Message]():
		return reflect.ValueOf(&a2a.Message{ID: path, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(path)}}), true
	case reflect.TypeFor[*a2a.Task]():
		return reflect.ValueOf(&a2a.Task{ID: "task-1", ContextID: "ctx-1",
			Status:    a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &sampleTime},
			Artifacts: []*a2a.Artifact{{ID: "art-1", Name: path, Parts: a2a.ContentParts{a2a.NewTextPart(path)}}},
			Metadata:  map[string]any{"at": path}}), true
	case reflect.TypeFor[wire.Event]():
		return reflect.ValueOf(wire.Event{Seq: 3, Status: &a2a.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx-1",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &sampleTime}}}), true
	case reflect.TypeFor[*a2a.PushConfig]():
		return reflect.ValueOf(&a2a.PushConfig{ID: path, TaskID: "task-1", URL: "https://hooks.example/" + path, Token: path}), true
	}
	return reflect.Value{}, false
}

// fill gives every carried field of v (settable) a value of its own.
func fill(v reflect.Value, path string) {
	if s, ok := sample(v.Type(), path); ok {
		v.Set(s)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !carried(f) || f.Anonymous && f.Type.Size() == 0 {
				continue
			}
			fill(settable(v.Field(i)), path+"."+f.Name)
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), path+"[0]")
		v.Set(s)
	case reflect.String:
		v.SetString(path)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(len(path)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(float64(len(path)) + 0.25)
	case reflect.Interface:
		v.Set(reflect.ValueOf(path))
	default:
		panic(fmt.Sprintf("fill: %s is a %s: give it a sample", path, v.Type()))
	}
}

// compare appends to lost the paths of carried fields of a whose values
// b does not hold. A field tagged carry:"counted" counts the runs: b holds
// one more.
func compare(a, b reflect.Value, path string, lost *[]string) {
	if _, ok := sample(a.Type(), path); ok || a.Kind() == reflect.Interface {
		if ja, jb := asJSON(a), asJSON(b); ja != jb {
			*lost = append(*lost, fmt.Sprintf("%s (%s, then %s)", path, ja, jb))
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			f := a.Type().Field(i)
			if !carried(f) {
				continue
			}
			fa, fb := settable(a.Field(i)), settable(b.Field(i))
			if f.Tag.Get("carry") == "counted" {
				if fb.Int() != fa.Int()+1 {
					*lost = append(*lost, fmt.Sprintf("%s (%d, then %d, want %d)", path+"."+f.Name, fa.Int(), fb.Int(), fa.Int()+1))
				}
				continue
			}
			compare(fa, fb, path+"."+f.Name, lost)
		}
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			*lost = append(*lost, path+" (nil in the next run)")
			return
		}
		if !a.IsNil() {
			compare(a.Elem(), b.Elem(), path, lost)
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			*lost = append(*lost, fmt.Sprintf("%s (%d elements, then %d)", path, a.Len(), b.Len()))
			return
		}
		for i := 0; i < a.Len(); i++ {
			compare(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), lost)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*lost = append(*lost, fmt.Sprintf("%s (%v, then %v)", path, a.Interface(), b.Interface()))
		}
	}
}

// settable returns v, which may be an unexported field, as a value the test
// may read and set: the run's state is its own fields.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

func asJSON(v reflect.Value) string {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}
