package status

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ConflictLater is a reconcile's ending after a write refused with a
// conflict (another writer changed the object meanwhile): not an error,
// but another pass soon, from what is stored, as Patch leaves it.
func ConflictLater(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("Changed underneath, retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// conflictRetry is how soon a pass refused with a conflict is tried again.
const conflictRetry = 200 * time.Millisecond
