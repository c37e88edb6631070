package thinktag_test

import (
	"fmt"

	"github.com/nodmix/nodmix/internal/thinktag"
)

func ExampleSplit() {
	visible, reasoning := thinktag.Split("<think>The user wants a tag name.</think>Use `<think>` tags.")
	fmt.Printf("%q\n%q\n", visible, reasoning)
	// Output:
	// "Use `<think>` tags."
	// "The user wants a tag name."
}

func ExampleFilter() {
	var f thinktag.Filter
	for _, delta := range []string{"<thi", "nk>plan</th", "ink>The answer", " is 42."} {
		fmt.Printf("%q\n", f.Write(delta))
	}
	fmt.Printf("%q %q\n", f.Close(), f.Reasoning())
	// Output:
	// ""
	// ""
	// "The answer"
	// " is 42."
	// "" "plan"
}
