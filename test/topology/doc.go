// Package topology tests the replicated and sharded targets' servers for
// real: local redis-server and mariadbd processes started with the
// arguments the operator's builders give its pods, replication and a
// cluster set up as its pods and Jobs set them up, and memtier measuring
// them with the command lines the operator builds.
package topology
