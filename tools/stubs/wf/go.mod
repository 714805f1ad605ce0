module inet.af/wf

go 1.21
