package targets

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// What the load generators must ask for and the session check compares
// reaches their Endpoint: from the MySQL target's TLS and session
// variables, and from an external endpoint's.
func TestEndpointCarriesTheTLSAndSessionRequest(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	vars := map[string]benchv1.SessionValue{"autocommit": "ON"}
	type request struct {
		TLS                   bool
		TLSVersion, TLSCipher string
		SessionVariables      map[string]string
	}
	of := func(ep pod.Endpoint) request {
		return request{ep.TLS, ep.TLSVersion, ep.TLSCipher, ep.SessionVariables}
	}
	want := request{true, "TLSv1.3", "TLS_AES_128_GCM_SHA256", map[string]string{"autocommit": "ON"}}

	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "perf", UID: "u"}, Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{
		MySQL: &benchv1.MySQLTarget{SessionVariables: vars, TLS: &benchv1.ServerTLS{Enabled: true, Version: benchv1.TLSv13, Cipher: "TLS_AES_128_GCM_SHA256"}}}}}
	o, err := mysqlServer{}.connect(context.Background(), c, run, specs.MySQLServer(run), Observed{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, of(o.Endpoint)); diff != "" {
		t.Errorf("mysql (-want +got)\n%s", diff)
	}
	run.Spec.Target.MySQL.TLS = nil
	if o, err = (mysqlServer{}).connect(context.Background(), c, run, specs.MySQLServer(run), Observed{}); err != nil || !cmp.Equal(of(o.Endpoint), request{SessionVariables: want.SessionVariables}) {
		t.Errorf("mysql without TLS: %+v, %v", of(o.Endpoint), err)
	}

	ext := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "perf"}, Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{
		External: &benchv1.ExternalTarget{Host: "db.example", Port: 3306, SessionVariables: vars,
			TLS: &benchv1.TLSSpec{Enabled: true, Version: benchv1.TLSv13, Cipher: "TLS_AES_128_GCM_SHA256"}}}}}
	o, err = External{}.Ensure(context.Background(), c, ext, Needs{})
	if err != nil || !o.Ready {
		t.Fatalf("external: %+v, %v", o, err)
	}
	if diff := cmp.Diff(want, of(o.Endpoint)); diff != "" {
		t.Errorf("external (-want +got)\n%s", diff)
	}
}

// Two-way TLS with the user's own certificate is refused at admission; a
// run stored before that rule ends as InvalidSpec naming the field, and not
// as an error retried until its timeout (the fuzz test found it so).
func TestTwoWayTLSWithTheUsersCertificateIsInvalidNotRetried(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "perf", UID: "u"}, Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{
		MySQL: &benchv1.MySQLTarget{TLS: &benchv1.ServerTLS{Enabled: true, RequireClientCertificates: true,
			CertificateSecretRef: &corev1.LocalObjectReference{Name: "mine"}}}}}}
	o, err := mysqlServer{}.connect(context.Background(), c, run, specs.MySQLServer(run), Observed{})
	if err != nil {
		t.Fatalf("an error is retried until the run's timeout: %v", err)
	}
	if o.Ready || o.Reason != benchv1.ReasonInvalidSpec || !strings.Contains(o.Message, "spec.target.mysql.tls.requireClientCertificates") {
		t.Errorf("got ready=%v reason=%q message=%q, want InvalidSpec naming spec.target.mysql.tls.requireClientCertificates", o.Ready, o.Reason, o.Message)
	}
}
