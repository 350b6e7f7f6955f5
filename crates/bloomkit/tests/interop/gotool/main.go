// Test helper for bloomkit's live Go cross-checks (built and run by tests/interop_live.rs).
//
//	gotool write FILE N FPP   elements on stdin -> WriteTo(FILE) and MarshalJSON(FILE.json)
//	gotool read FILE          ReadFrom(FILE) and UnmarshalJSON(FILE.json), test elements on stdin
//
// Prints one line: <all present in binary> <all present in JSON> <ApproximatedSize> <m> <k>
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/bits-and-blooms/bloom"
)

func main() {
	var items []string
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		items = append(items, scanner.Text())
	}
	path := os.Args[2]
	var f, j *bloom.BloomFilter
	if os.Args[1] == "write" {
		n, _ := strconv.ParseUint(os.Args[3], 10, 64)
		p, _ := strconv.ParseFloat(os.Args[4], 64)
		f = bloom.NewWithEstimates(uint(n), p)
		for _, s := range items {
			f.AddString(s)
		}
		out, err := os.Create(path)
		check(err)
		_, err = f.WriteTo(out)
		check(err)
		check(out.Close())
		js, err := f.MarshalJSON()
		check(err)
		check(os.WriteFile(path+".json", js, 0o644))
		j = f
	} else {
		in, err := os.Open(path)
		check(err)
		f = &bloom.BloomFilter{}
		_, err = f.ReadFrom(in)
		check(err)
		js, err := os.ReadFile(path + ".json")
		check(err)
		j = &bloom.BloomFilter{}
		check(j.UnmarshalJSON(js))
	}
	allF, allJ := true, true
	for _, s := range items {
		allF = allF && f.TestString(s)
		allJ = allJ && j.TestString(s)
	}
	fmt.Println(allF, allJ, f.ApproximatedSize(), f.Cap(), f.K())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
