package status

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNameTaken: a child's name is held by an object its owner does not control.
var ErrNameTaken = errors.New("name taken")

// EnsureControlledBy is called when creating child said AlreadyExists: the
// existing object counts as the owner's child only if the owner controls
// it; a same-named object of anyone else would otherwise silently stand in
// for a run this owner never made. The error wraps ErrNameTaken then.
func EnsureControlledBy(ctx context.Context, c client.Client, owner, child client.Object) error {
	existing, ok := child.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("while reading the existing %s: not a client.Object", child.GetName())
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(child), existing); err != nil {
		return fmt.Errorf("while reading the existing %s: %w", child.GetName(), err)
	}
	if metav1.IsControlledBy(existing, owner) {
		return nil
	}
	by := "nothing"
	if ref := metav1.GetControllerOf(existing); ref != nil {
		by = fmt.Sprintf("%s %s", ref.Kind, ref.Name)
	}
	return fmt.Errorf("%w: %s %s/%s already exists and is controlled by %s, not by %s; delete or rename it",
		ErrNameTaken, kindOf(c, existing), existing.GetNamespace(), existing.GetName(), by, owner.GetName())
}

// kindOf names an object's kind from the client's scheme.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return "object"
}
