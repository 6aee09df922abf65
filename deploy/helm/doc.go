// Package helm holds the test of a2aflow's Helm chart (deploy/helm/a2aflow):
// helm lint and helm template through Helm's own Go packages, for three
// value sets, and every rendered manifest decoded strictly into the
// Kubernetes API's types and checked to fit together.
package helm
