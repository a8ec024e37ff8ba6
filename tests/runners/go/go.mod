module hvrunsample

go 1.19
