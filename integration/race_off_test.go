//go:build !race

package integration_test

// raceDetector is false in a plain build: resident-set bounds are the server's own.
const raceDetector = false
