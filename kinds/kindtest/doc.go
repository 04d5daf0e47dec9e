// Package kindtest holds the tests that hold the kinds of job to "a kind
// is one folder and one import": a fake kind registered only in the test
// binary is found in every registry a real coordinator and its clients
// read (fake_test.go), and no file outside kinds/install keeps a list of
// kind names by hand (handlist_test.go). It has no code of its own.
package kindtest
