//go:build tools

// Keeps the commands' dependency graphs in go.sum; the binaries are built with
// `go build k8s.io/kubernetes/cmd/<name>` (the control plane by build-binaries.sh, kubelet and
// kube-proxy of the real test node by build-node-binaries.sh).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/component-base/cli"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
