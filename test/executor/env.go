package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resolveEnv resolves a container's environment as the kubelet does:
// envFrom first, then env in order with $(VAR) references expanded.
func (e *Executor) resolveEnv(ctx context.Context, pod *corev1.Pod, c corev1.Container) ([]string, error) {
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.SecretRef != nil:
			s, err := e.o.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				if optional(from.SecretRef.Optional) && apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
			}
			for k, v := range s.Data {
				set(from.Prefix+k, string(v))
			}
		case from.ConfigMapRef != nil:
			cm, err := e.o.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				if optional(from.ConfigMapRef.Optional) && apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("envFrom configMap %q: %w", from.ConfigMapRef.Name, err)
			}
			for k, v := range cm.Data {
				set(from.Prefix+k, v)
			}
		}
	}
	for _, ev := range c.Env {
		if ev.ValueFrom == nil {
			set(ev.Name, expand(ev.Value, vals))
			continue
		}
		v, skip, err := e.valueFrom(ctx, pod, c, ev.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", ev.Name, err)
		}
		if !skip {
			set(ev.Name, v)
		}
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env, nil
}

func (e *Executor) valueFrom(ctx context.Context, pod *corev1.Pod, c corev1.Container, src *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, err := e.o.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			if optional(ref.Optional) && apierrors.IsNotFound(err) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
		}
		return string(v), false, nil
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, err := e.o.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			if optional(ref.Optional) && apierrors.IsNotFound(err) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("configMap %q: %w", ref.Name, err)
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("configMap %q has no key %q", ref.Name, ref.Key)
		}
		return v, false, nil
	case src.FieldRef != nil:
		v, err := fieldValue(pod, src.FieldRef.FieldPath)
		return v, false, err
	case src.ResourceFieldRef != nil:
		r := src.ResourceFieldRef.Resource
		var q = c.Resources.Limits
		if strings.HasPrefix(r, "requests.") {
			q = c.Resources.Requests
		}
		name := corev1.ResourceName(r[strings.Index(r, ".")+1:])
		v, ok := q[name]
		if !ok {
			return "", false, nil
		}
		if name == corev1.ResourceCPU {
			return fmt.Sprint((v.MilliValue() + 999) / 1000), false, nil
		}
		return fmt.Sprint(v.Value()), false, nil
	}
	return "", true, nil
}

func optional(b *bool) bool { return b != nil && *b }

// expand replaces $(VAR) with earlier variables, keeping unknown references
// and turning $$ into $, as Kubernetes does.
func expand(s string, vals map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			if s[i+1] == '$' {
				b.WriteByte('$')
				i++
				continue
			}
			if s[i+1] == '(' {
				if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
					name := s[i+2 : i+2+end]
					if v, ok := vals[name]; ok {
						b.WriteString(v)
						i += 2 + end
						continue
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fieldValue resolves a downward-API field of a pod, for environment
// variables and downward-API volume files.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.hostIP":
		return "127.0.0.1", nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	return "", fmt.Errorf("fieldRef %q is not supported by the test executor", path)
}

// writeDownwardAPI writes the pod's downward-API volume files into their
// volume directories, as the kubelet does at start and again whenever the
// pod's metadata changes (atomically: a reader never sees half a file).
func writeDownwardAPI(pod *corev1.Pod, volumesDir string) error {
	for _, v := range pod.Spec.Volumes {
		if v.DownwardAPI == nil {
			continue
		}
		dir := filepath.Join(volumesDir, v.Name)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		_ = os.Chmod(dir, 0o777)
		for _, item := range v.DownwardAPI.Items {
			if item.FieldRef == nil {
				continue
			}
			val, err := fieldValue(pod, item.FieldRef.FieldPath)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, item.Path)
			if old, err := os.ReadFile(path); err == nil && string(old) == val {
				continue
			}
			tmp := path + ".tmp"
			if err := os.WriteFile(tmp, []byte(val), 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeConfigVolumes fills ConfigMap, Secret and projected volumes (their
// ConfigMap and Secret sources) with their keys (or the items listed), as
// the kubelet does before the container starts.
func (e *Executor) writeConfigVolumes(ctx context.Context, pod *corev1.Pod, volumesDir string, rewrite func([]byte) []byte) error {
	for _, v := range pod.Spec.Volumes {
		var sources []corev1.VolumeProjection
		switch {
		case v.ConfigMap != nil:
			sources = []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: v.ConfigMap.LocalObjectReference,
				Items: v.ConfigMap.Items, Optional: v.ConfigMap.Optional}}}
		case v.Secret != nil:
			sources = []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: v.Secret.SecretName},
				Items: v.Secret.Items, Optional: v.Secret.Optional}}}
		case v.Projected != nil:
			sources = v.Projected.Sources
		default:
			continue
		}
		for _, src := range sources {
			if err := e.writeSource(ctx, pod, v.Name, filepath.Join(volumesDir, v.Name), src, rewrite); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSource writes one ConfigMap or Secret source of a volume into dir.
func (e *Executor) writeSource(ctx context.Context, pod *corev1.Pod, volume, dir string, src corev1.VolumeProjection, rewrite func([]byte) []byte) error {
	var data map[string][]byte
	var items []corev1.KeyToPath
	isConfig := false
	switch {
	case src.ConfigMap != nil:
		cm, err := e.o.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			if optional(src.ConfigMap.Optional) {
				return nil
			}
			return fmt.Errorf("volume %s: %w", volume, err)
		}
		data = map[string][]byte{}
		for k, s := range cm.Data {
			data[k] = []byte(s)
		}
		for k, b := range cm.BinaryData {
			data[k] = b
		}
		items, isConfig = src.ConfigMap.Items, true
	case src.Secret != nil:
		s, err := e.o.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, src.Secret.Name, metav1.GetOptions{})
		if err != nil {
			if optional(src.Secret.Optional) {
				return nil
			}
			return fmt.Errorf("volume %s: %w", volume, err)
		}
		data, items = s.Data, src.Secret.Items
	default:
		return nil // the downward API is written by writeDownwardAPI
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("volume %s: no key %q", volume, it.Key)
		}
		p := filepath.Join(dir, it.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		if isConfig {
			b = rewrite(b)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
