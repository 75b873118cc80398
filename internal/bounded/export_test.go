package bounded

import (
	"fmt"
	"reflect"
)

// Cost is what the walk estimates decoding msgpack data into v's type
// allocates.
func Cost(data []byte, v any, tag string) (int64, error) {
	ti, err := typeInfo(reflect.TypeOf(v).Elem(), tag, false)
	if err != nil {
		return 0, err
	}
	w := walker{data: data}
	if err := w.value(ti, 0); err != nil {
		return 0, err
	}
	return w.cost, w.end()
}

// CostJSON is Cost for JSON text.
func CostJSON(data []byte, v any) (int64, error) {
	ti, err := typeInfo(reflect.TypeOf(v).Elem(), "", true)
	if err != nil {
		return 0, err
	}
	w := jwalker{data: data}
	if err := w.value(ti, 0); err != nil {
		return 0, err
	}
	if w.bad {
		return w.cost, fmt.Errorf("syntax")
	}
	return w.cost, nil
}
