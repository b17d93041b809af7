package status

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Patch writes obj's status when it differs from base's (before and after
// are the two statuses), with an optimistic lock. A conflict or a deleted
// object is not an error: the next reconcile starts from what is stored.
// written says whether the status was stored.
func Patch(ctx context.Context, c client.Client, base, obj client.Object, before, after any) (written bool, err error) {
	if equality.Semantic.DeepEqual(before, after) {
		return false, nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("Status changed underneath, retrying", "error", err.Error())
			return false, nil
		}
		return false, err
	}
	return true, nil
}
