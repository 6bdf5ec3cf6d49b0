// Command hello is the smallest main package, for the build test.
package main

func main() {}
