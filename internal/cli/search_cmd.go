package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
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
			qname, qr := "stdin", g.stdin()
			if queriesFile != "-" {
				f, err := openInputFile(queriesFile)
				if err != nil {
					return err
				}
				defer f.Close()
				qname, qr = queriesFile, f
			}
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
//
// A named pipe given as the path is refused rather than opened: opening one waits for a writer,
// which may never come, and nothing, not even SIGINT, ends that wait. A pipe arrives on stdin
// ("-", or /dev/stdin, a link to it), which the shell has opened, or is given as a link to
// it, as /dev/fd/N of a process substitution is.
func (g *globals) readCatalogFile(path string, opts catalog.ReadOptions) ([]catalog.Tool, error) {
	name, r := "stdin", g.stdin()
	if path != "-" {
		name = path
		f, err := openInputFile(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
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

// openInputFile opens a file of JSON lines (a catalog, queries) that is not a named pipe (see
// readCatalogFile) or a directory.
func openInputFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		return nil, fmt.Errorf("%s: is a named pipe, which nodmix does not wait on for a writer: pipe the file to stdin and give it as -", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not a file of JSON lines", path)
	}
	return f, nil
}

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
