package config

import "github.com/nodmix/nodmix/internal/config/json5"

type jsonNode = json5.Node

func parseNode(b []byte) (*json5.Node, error) { return json5.Parse(b) }
