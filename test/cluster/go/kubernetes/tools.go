//go:build tools

// Keeps the commands' dependency graphs in go.sum; the binaries are built with
// `go build k8s.io/kubernetes/cmd/<name>`.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/component-base/cli"
)
