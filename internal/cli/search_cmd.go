package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/regular"
	"github.com/nodmix/nodmix/internal/search"
	"github.com/nodmix/nodmix/internal/toolsearch"
	"github.com/spf13/cobra"
)

func newSearchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "search", Short: "Measure the tool rankers"}
	var toolsFile, queriesFile, ranker string
	var asJSON bool
	eval := &cobra.Command{
		Use:   "eval --tools FILE --queries FILE",
		Short: "Evaluate a ranker on a tool-retrieval set: Recall@1/5/10, NDCG@10, MRR, speed",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if toolsFile == "" || queriesFile == "" {
				return usagef("search eval: --tools and --queries are required")
			}
			if ranker != "bm25" && ranker != "toolsearch" && ranker != "reference" {
				return usagef("search eval: --ranker: must be one of bm25, toolsearch, reference")
			}
			if toolsFile == "-" && queriesFile == "-" {
				return usagef("search eval: --tools and --queries cannot both be - (stdin)")
			}
			tools, err := g.readCatalogFile(toolsFile, catalog.ReadOptions{})
			if err != nil {
				return err
			}
			qname, qr, closeQueries, err := g.openInput(queriesFile)
			if err != nil {
				return err
			}
			defer closeQueries()
			queries, err := search.ReadQueries(qr)
			if err != nil {
				return fmt.Errorf("%s: %w", qname, err)
			}
			start := time.Now()
			rank := buildRanker(ranker, tools)
			build := time.Since(start)
			m := search.Evaluate(rank, queries)
			m.BuildMS = float64(build.Microseconds()) / 1000
			if asJSON {
				return json.NewEncoder(c.OutOrStdout()).Encode(m)
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "ranker\t%s\n", ranker)
			fmt.Fprintf(w, "tools\t%d\n", len(tools))
			fmt.Fprintf(w, "queries\t%d\n", m.Queries)
			fmt.Fprintf(w, "Recall@1\t%.4f\n", m.Recall1)
			fmt.Fprintf(w, "Recall@5\t%.4f\n", m.Recall5)
			fmt.Fprintf(w, "Recall@10\t%.4f\n", m.Recall10)
			fmt.Fprintf(w, "NDCG@10\t%.4f\n", m.NDCG10)
			fmt.Fprintf(w, "MRR\t%.4f\n", m.MRR)
			fmt.Fprintf(w, "queries/s\t%.0f\n", m.QPS)
			fmt.Fprintf(w, "index build\t%.2f ms\n", m.BuildMS)
			return w.Flush()
		},
	}
	eval.Flags().StringVar(&toolsFile, "tools", "", "catalog file (JSON Lines; - for stdin)")
	eval.Flags().StringVar(&queriesFile, "queries", "", "queries file (JSON Lines: qid, query, gold; - for stdin)")
	eval.Flags().StringVar(&ranker, "ranker", "bm25", "bm25 (the discovery index), toolsearch (nodmix's Tool Search ranker) or reference (the reference Tool Search ranker)")
	eval.Flags().BoolVar(&asJSON, "json", false, "print the metrics as JSON")
	cmd.AddCommand(batch(eval))
	return cmd
}

// readCatalogFile reads the catalog file at path, "-" meaning stdin, with the checks of opts.
func (g *globals) readCatalogFile(path string, opts catalog.ReadOptions) ([]catalog.Tool, error) {
	name, r, closeFile, err := g.openInput(path)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	tools, err := catalog.ReadFileWith(r, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tools, nil
}

// stdin is the command's standard input; none reads as empty.
func (g *globals) stdin() io.Reader {
	if g.env.Stdin == nil {
		return strings.NewReader("")
	}
	return g.env.Stdin
}

// openInput opens a file of JSON lines (a catalog, queries) given on the command line, with the
// name its errors go by: "-" is stdin, and so is a path naming the file stdin is (/dev/stdin);
// /dev/fd/N is the pipe of a process substitution. Those the shell has opened. Anything else
// must be a regular file: a named pipe (or a link to one) is refused rather than waited on,
// since opening one waits for a writer, which may never come, and nothing, not even SIGINT,
// ends that wait.
func (g *globals) openInput(path string) (name string, r io.Reader, release func() error, err error) {
	r, release, err = regular.OpenInput(path, g.stdin())
	if nr := (*regular.Error)(nil); errors.As(err, &nr) {
		return "", nil, nil, &inputError{nr}
	}
	if err != nil {
		return "", nil, nil, err
	}
	if path == "-" {
		path = "stdin"
	}
	return path, r, release, nil
}

// inputError is an input path that names something other than a regular file, saying what to do.
type inputError struct{ err *regular.Error }

func (e *inputError) Error() string {
	if e.err.Mode&fs.ModeNamedPipe != 0 {
		return e.err.Path + ": is a named pipe, which nodmix does not wait on for a writer: pipe the file to stdin and give it as -"
	}
	return e.err.Path + ": is " + e.err.Kind() + ", not a file of JSON lines"
}

func (e *inputError) Unwrap() error { return e.err }

// buildRanker indexes the tools and returns a function that ranks tool ids for a query.
func buildRanker(kind string, tools []catalog.Tool) func(query string, k int) []string {
	switch kind {
	case "toolsearch", "reference":
		ptrs := make([]*catalog.Tool, len(tools))
		for i := range tools {
			ptrs[i] = &tools[i]
		}
		// The same documents the live Tool Search runtime indexes.
		r := toolsearch.SearchRanker(search.RankerOptions{Reference: kind == "reference"})(ptrs)
		return func(q string, k int) []string {
			hits := r.Search(q, k, nil)
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = tools[h.Doc].ID
			}
			return ids
		}
	default:
		docs := make([]search.Doc, len(tools))
		for i := range tools {
			docs[i] = discovery.Doc(&tools[i])
		}
		ix := search.NewBM25(docs)
		return func(q string, k int) []string {
			hits, err := ix.Search(q, k)
			if err != nil {
				return nil
			}
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = tools[h.Index].ID
			}
			return ids
		}
	}
}
