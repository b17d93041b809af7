package testutil

import (
	"reflect"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// TargetKindFields are the target kinds of the API, TargetSpec's one-of
// members (its pointers to structs, but replicaPlacement, a placement):
// JSON name as spec.target spells it → Go field name.
func TargetKindFields() map[string]string {
	out := map[string]string{}
	typ := reflect.TypeOf(benchv1.TargetSpec{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct || f.Type.Elem() == reflect.TypeOf(benchv1.Placement{}) {
			continue
		}
		json, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[json] = f.Name
	}
	return out
}
