//go:build tools

// Package tools pins the Kubernetes and etcd binaries that tools/kubernetes.sh builds (kube-apiserver, kubectl,
// etcd) to the versions in go.mod, their whole dependency graph fixed by go.sum. It is never compiled: the build tag
// keeps `go build ./...` away, and tools/kubernetes.sh builds the three main packages by their import paths.
//
// k8s.io/kubernetes cannot be installed with `go install ...@version` (its go.mod replaces its staging modules with
// ./staging/src/k8s.io/...), so this module requires it together with every staging module at the matching v0.x
// version (the `=> ./staging/src/...` lines of its go.mod, minus k8s.io/sample-*, which nothing here imports and the
// proxy refuses). etcd is required at the version Kubernetes itself pins (hack/lib/etcd.sh ETCD_VERSION) and is
// already in Kubernetes' module graph, so it shares that graph's dependency versions and build cache.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
