//go:build race

package integration_test

// raceDetector is true in a build with the race detector, whose shadow memory makes every
// allocation of the test process cost several times its size: a resident-set bound is then
// not the server's, and scripts/test.sh checks it in a plain run (see TestInboundMemoryWithoutCredentials).
const raceDetector = true
