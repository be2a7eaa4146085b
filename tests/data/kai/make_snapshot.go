// make_snapshot.go builds snapshot.zip the way KAI Scheduler's snapshot plugin serves it
// (github.com/NVIDIA/KAI-Scheduler, pkg/scheduler/plugins/snapshot/snapshot.go, serveSnapshot):
// archive/zip's streaming writer, one entry made by zipWriter.Create("snapshot.json") (deflate,
// sizes in a data descriptor after the data), the JSON copied in, the writer closed.
//
//	go run make_snapshot.go snapshot.json snapshot.zip
package main

import (
	"archive/zip"
	"io"
	"os"
	"strings"
)

func main() {
	jsonBytes, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	out, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	zipWriter := zip.NewWriter(out)
	jsonWriter, err := zipWriter.Create("snapshot.json")
	if err != nil {
		panic(err)
	}
	if _, err = io.Copy(jsonWriter, strings.NewReader(string(jsonBytes))); err != nil {
		panic(err)
	}
	if err = zipWriter.Close(); err != nil {
		panic(err)
	}
	if err = out.Close(); err != nil {
		panic(err)
	}
}
