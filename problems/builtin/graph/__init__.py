"""graph problems on dense adjacency matrices: shortest paths and minimum spanning trees, checked to 1e-4 relative."""
