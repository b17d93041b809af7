package controllers

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// ClientsetLogReader reads pod logs through the API server.
type ClientsetLogReader struct {
	Clientset kubernetes.Interface
}

// maxLogBytes bounds what one log read may bring into the manager.
const maxLogBytes = 8 << 20

// TailLog returns the last lines of a container's log.
func (l ClientsetLogReader) TailLog(ctx context.Context, namespace, pod, container string, lines int64) ([]byte, error) {
	req := l.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &lines})
	stream, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	return io.ReadAll(io.LimitReader(stream, maxLogBytes))
}
