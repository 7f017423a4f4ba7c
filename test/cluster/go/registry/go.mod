// Test tooling only: the OCI registry `make e2e` pushes the image and the chart to (main.go).
module secondcron.test/registry

go 1.26.0

require github.com/google/go-containerregistry v0.22.1
