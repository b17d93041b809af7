package executor

import (
	"context"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The simulated cluster has no storage provisioner: a target's data volume
// (a StatefulSet's claim, CloudNativePG's WAL and tablespaces) would stay
// unbound and its pod unscheduled. With PlayServers the executor stands for
// a local-path provisioner: each pending claim gets a volume of its size,
// class and access modes on a directory of its own, bound to it by the
// controller manager's volume binder (the claimRef), and removed when the
// claim is gone. The local servers keep their data elsewhere: the volume
// only lets the pod be scheduled.

// volumeInterval between looks for pending claims.
const volumeInterval = time.Second

func (e *Executor) provisionVolumes(ctx context.Context) error {
	if !e.o.PlayServers || time.Since(e.lastVolumes) < volumeInterval {
		return nil
	}
	e.lastVolumes = time.Now()
	claims, err := e.o.Client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Spec.VolumeName != "" || c.Status.Phase != corev1.ClaimPending || c.DeletionTimestamp != nil {
			continue
		}
		if err := e.provisionVolume(ctx, c); err != nil {
			e.logf("claim %s/%s: no volume: %v", c.Namespace, c.Name, err)
		}
	}
	return e.releaseVolumes(ctx)
}

func (e *Executor) provisionVolume(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	name := "played-" + string(c.UID)
	dir := filepath.Join(e.o.WorkDir, "volumes", string(c.UID))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	size := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	class := ""
	if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"dbperf.io/played": "true"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   c.Spec.AccessModes,
			StorageClassName:              class,
			VolumeMode:                    c.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
		},
	}
	if err := ignoreExists(e.o.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})); err != nil {
		return err
	}
	return nil
}

// releaseVolumes deletes the played volumes whose claim is gone.
func (e *Executor) releaseVolumes(ctx context.Context) error {
	pvs, err := e.o.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "dbperf.io/played=true"})
	if err != nil {
		return err
	}
	for _, pv := range pvs.Items {
		if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
			continue
		}
		if err := e.o.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err == nil && pv.Spec.HostPath != nil {
			_ = os.RemoveAll(pv.Spec.HostPath.Path)
		}
	}
	return nil
}
