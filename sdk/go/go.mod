module github.com/orkspace/ork/sdk/go

go 1.24
