package executor

import (
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// serviceName matches a cluster DNS name of a Service.
var serviceName = regexp.MustCompile(`\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\b`)

// serviceProxy stands for cluster DNS and kube-proxy: each Service a pod
// names gets a loopback address of its own (127.77.x.y) on which a forwarder
// listens on the Service's ports and forwards to its ready endpoints. Only
// loopback addresses are used: nothing is reachable from outside the machine.
type serviceProxy struct {
	client kubernetes.Interface
	log    io.Writer
	mu     sync.Mutex
	next   int
	byName map[string]*forwarder
	// starting are backends (host:port) whose server is not serving yet:
	// connections to them wait, as clients of a pod not yet ready would.
	starting map[string]bool
}

// startingWait is how long a connection waits for a starting backend.
const startingWait = time.Minute

func (p *serviceProxy) setStarting(backend string, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.starting == nil {
		p.starting = map[string]bool{}
	}
	if on {
		p.starting[backend] = true
	} else {
		delete(p.starting, backend)
	}
}

// waitStarted waits until backend is not starting, for at most startingWait.
func (p *serviceProxy) waitStarted(backend string) {
	for deadline := time.Now().Add(startingWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		starting := p.starting[backend]
		p.mu.Unlock()
		if !starting {
			return
		}
	}
}

type forwarder struct {
	ip        string
	listeners []net.Listener
	refs      int
}

// rewrite replaces Service DNS names in s by their forwarder's address.
func (p *serviceProxy) rewrite(ctx context.Context, s string) (string, []string, error) {
	var refs []string
	var firstErr error
	out := serviceName.ReplaceAllStringFunc(s, func(m string) string {
		sub := serviceName.FindStringSubmatch(m)
		name, ns := sub[1], sub[3]
		ip, err := p.acquire(ctx, ns, name)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return m
		}
		refs = append(refs, ns+"/"+name)
		return ip
	})
	return out, refs, firstErr
}

func (p *serviceProxy) acquire(ctx context.Context, ns, name string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := ns + "/" + name
	if p.byName == nil {
		p.byName = map[string]*forwarder{}
	}
	if f, ok := p.byName[key]; ok {
		f.refs++
		return f.ip, nil
	}
	svc, err := p.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("service %s: %w", key, err)
	}
	p.next++
	ip := fmt.Sprintf("127.77.%d.%d", p.next/250, p.next%250+1)
	f := &forwarder{ip: ip, refs: 1}
	for _, sp := range svc.Spec.Ports {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(sp.Port))))
		if err != nil {
			f.close()
			return "", fmt.Errorf("service %s port %d: %w", key, sp.Port, err)
		}
		f.listeners = append(f.listeners, l)
		go p.serve(l, ns, name, sp)
	}
	p.byName[key] = f
	fmt.Fprintf(p.log, "executor: service %s → %s\n", key, ip)
	return ip, nil
}

func (p *serviceProxy) serve(l net.Listener, ns, name string, sp corev1.ServicePort) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			addr, err := p.endpoint(ctx, ns, name, sp)
			cancel()
			if err != nil {
				fmt.Fprintf(p.log, "executor: service %s/%s: %v\n", ns, name, err)
				return
			}
			p.waitStarted(addr)
			up, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				fmt.Fprintf(p.log, "executor: service %s/%s: %v\n", ns, name, err)
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, conn); done <- struct{}{} }()
			go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
			<-done
		}()
	}
}

// BackendAnnotation on a Service names the local address (host:port) that
// stands for its endpoints. Simulators of other operators set it (the API
// server refuses loopback addresses in EndpointSlices); it wins over them.
const BackendAnnotation = "executor.dbperf.io/backend"

// endpoint picks the Service's backend: the BackendAnnotation, else a ready
// endpoint of the Service's port from its EndpointSlices, as kube-proxy does.
func (p *serviceProxy) endpoint(ctx context.Context, ns, name string, sp corev1.ServicePort) (string, error) {
	svc, err := p.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if b := svc.Annotations[BackendAnnotation]; b != "" {
		return b, nil
	}
	slices, err := p.client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return "", err
	}
	for _, s := range slices.Items {
		for _, port := range s.Ports {
			if port.Port == nil || (port.Name != nil && *port.Name != sp.Name) {
				continue
			}
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if len(ep.Addresses) > 0 {
					return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*port.Port))), nil
				}
			}
		}
	}
	return "", fmt.Errorf("no ready endpoint for port %q", sp.Name)
}

func (p *serviceProxy) release(refs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range refs {
		if f, ok := p.byName[k]; ok {
			if f.refs--; f.refs <= 0 {
				f.close()
				delete(p.byName, k)
			}
		}
	}
}

func (p *serviceProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, f := range p.byName {
		f.close()
		delete(p.byName, k)
	}
}

func (f *forwarder) close() {
	for _, l := range f.listeners {
		_ = l.Close()
	}
}
