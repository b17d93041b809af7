package specs

import (
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The mongodb target kind: the official image, used when the spec names none.
const (
	DefaultMongoDBImage = "mongo:8.0"
	MongoDBPort         = 27017
	// MongoDBKind is the kind as spec.target spells it; it names the generated Secrets.
	MongoDBKind = "mongodb"
)

// The kind's default images, for the registry remap and the allow-list
// (images.go).
func init() {
	addDefaultImage("spec.target.mongodb.image", DefaultMongoDBImage, func(t *benchv1.TargetSpec) *string {
		if t.MongoDB == nil {
			return nil
		}
		return &t.MongoDB.Image
	})
}

// MongoDBServer is the official MongoDB image with root credentials from
// the generated Secret.
func MongoDBServer(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.MongoDB
	creds := CredentialsSecretName(run, MongoDBKind)
	return Server{Run: run, Name: ServerName(run, MongoDBKind), Container: "mongodb", User: "dbperf", Image: orDefault(t.Image, DefaultMongoDBImage),
		Port: MongoDBPort, PortName: "mongodb", Replicas: 1, UID: 999, DataPath: "/data/db", Storage: t.Storage, Resources: t.Resources,
		ExtraVolumes: []string{"/data/configdb", "/tmp"},
		Env:          []corev1.EnvVar{secretEnv("MONGO_INITDB_ROOT_USERNAME", creds, "username"), secretEnv("MONGO_INITDB_ROOT_PASSWORD", creds, "password")},
		Args:         append([]string{"--bind_ip_all"}, t.Args...),
	}
}
