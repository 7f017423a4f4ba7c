// The pod sandbox's process (what registry.k8s.io/pause is elsewhere; nothing can be pulled here):
// PID 1 of each pod's namespaces, it reaps orphans and exits on SIGTERM/SIGINT.
// build-node-binaries.sh packs it into an OCI archive that the test node imports.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			return
		case <-children:
			for {
				var status syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
